/**
 * What in the agent's Containerfile the engine would fetch itself. An `ADD <url>` is downloaded
 * by the engine's daemon, from the host's own network: its loopback services and a cloud's
 * metadata address included, outside the container.network policy the RUN steps get, and what
 * it got lands in the agent's image. The Containerfile is the agent's to edit, so no such
 * source is ever built: a RUN step (curl, wget) fetches with the network the operator allows.
 */

/** Pure: the Containerfile's logical lines (continuations joined, comments and parser directives dropped). */
function logicalLines(containerfile: string): string[] {
  const physical = containerfile.split(/\r?\n/);
  // The escape character is a parser directive: a `# escape=` comment before anything else.
  let escape = '\\';
  for (const line of physical) {
    const directive = /^\s*#\s*([a-z]+)\s*=\s*(\S+)\s*$/i.exec(line);
    if (!directive) break;
    if (directive[1]?.toLowerCase() === 'escape' && directive[2] === '`') escape = '`';
  }
  const lines: string[] = [];
  let pending: string | undefined;
  for (const line of physical) {
    // Comment lines inside a continuation are skipped by the engine, and so here.
    if (/^\s*#/.test(line)) continue;
    const trimmed = line.trimEnd();
    const continued = trimmed.endsWith(escape);
    const part = continued ? trimmed.slice(0, -1) : line;
    pending = pending === undefined ? part : `${pending} ${part}`;
    if (!continued) {
      lines.push(pending);
      pending = undefined;
    }
  }
  if (pending !== undefined) lines.push(pending);
  return lines;
}

/** Pure: the arguments of an instruction, in its JSON form or its plain one, without `--flag` options. */
function argumentsOf(rest: string): string[] {
  const text = rest.trim();
  if (text.startsWith('[')) {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (Array.isArray(parsed)) return parsed.map(String);
    } catch {
      // not JSON: the engine takes it as the plain form too
    }
  }
  return text.split(/\s+/).filter((word) => word !== '' && !word.startsWith('--'));
}

/**
 * Pure: the sources of the Containerfile's ADD instructions (ONBUILD ADD too) the engine would
 * fetch from a network: a URL, or anything with a variable (`$URL`, `${ARG}`), which a build
 * argument or an ARG default could make a URL.
 */
export function remoteAddSources(containerfile: string): string[] {
  const remote: string[] = [];
  for (const line of logicalLines(containerfile)) {
    const add = /^\s*(?:onbuild\s+)?add\s+(.*)$/is.exec(line);
    if (!add) continue;
    const words = argumentsOf(add[1] ?? '');
    for (const source of words.slice(0, -1)) {
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source) || source.includes('$')) remote.push(source);
    }
  }
  return remote;
}
