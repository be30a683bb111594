/**
 * What in the agent's Containerfile the engine would fetch itself. An `ADD <url>` is downloaded
 * by the engine's daemon, and an image named by FROM, `COPY --from=` or `RUN --mount=from=` that
 * it lacks is pulled by it, from the host's own network: its loopback services and a cloud's
 * metadata address included, outside the container.network policy the RUN steps get (a registry
 * name is a DNS question and an HTTP request the agent chose). The Containerfile is the agent's to
 * edit, so no such source is ever built: a RUN step (curl, wget) fetches with the network the
 * operator allows, and images come from the engine's own store or an earlier stage.
 */

/** Pure: the parser directives at the top of the Containerfile (`# syntax=…`, `# escape=…`), keys lower-cased. */
function directivesOf(containerfile: string): Map<string, string> {
  const directives = new Map<string, string>();
  for (const line of containerfile.split(/\r?\n/)) {
    const directive = /^\s*#\s*([a-z]+)\s*=\s*(\S+)\s*$/i.exec(line);
    if (!directive) break;
    directives.set((directive[1] ?? '').toLowerCase(), directive[2] ?? '');
  }
  return directives;
}

/** Pure: the Containerfile's logical lines (continuations joined, comments and parser directives dropped). */
function logicalLines(containerfile: string): string[] {
  const physical = containerfile.split(/\r?\n/);
  // The escape character is a parser directive: a `# escape=` comment before anything else.
  const escape = directivesOf(containerfile).get('escape') === '`' ? '`' : '\\';
  const lines: string[] = [];
  let pending: string | undefined;
  for (const line of physical) {
    // Comment lines, and blank ones inside a continuation, are skipped by the engine, and so here.
    if (/^\s*#/.test(line)) continue;
    if (pending !== undefined && line.trim() === '') continue;
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

/** An image the Containerfile names outside its own stages; `refused` says why it cannot even be looked up. */
export interface NamedImage {
  /** How the Containerfile names it: `FROM`, `COPY --from`, `RUN --mount from`, `# syntax`. */
  instruction: string;
  reference: string;
  refused?: string;
}

/** Pure: the `--flag=value` options that open an instruction's arguments (a quoted value may hold spaces). */
function leadingFlags(rest: string): string[] {
  const flags: string[] = [];
  const flag = /\s*(--(?:[^\s"']|"[^"]*"|'[^']*')+)/y;
  for (let match = flag.exec(rest); match; match = flag.exec(rest)) flags.push(match[1] ?? '');
  return flags;
}

/** Pure: the `from` of a `--mount=type=bind,from=x,…` option, quotes dropped. */
function mountFrom(flag: string): string | undefined {
  const spec = /^--mount=(.*)$/is.exec(flag)?.[1];
  if (spec === undefined) return undefined;
  for (const field of spec.split(',')) {
    const [key, ...value] = field.replace(/["']/g, '').split('=');
    if (key?.trim().toLowerCase() === 'from') return value.join('=').trim();
  }
  return undefined;
}

/**
 * Pure: the images the Containerfile would have the engine use by name: FROM bases, `COPY --from=`
 * and `RUN --mount=…,from=` sources (ONBUILD ones too) that are not `scratch` or an earlier stage
 * (by its `AS` name or its index), and a `# syntax=` frontend. A name with a variable, a FROM
 * with `--platform` (another platform's variant is pulled) and any ONBUILD image come back
 * `refused`: what they would fetch is not known from the text.
 */
export function namedImages(containerfile: string): NamedImage[] {
  const named: NamedImage[] = [];
  const syntax = directivesOf(containerfile).get('syntax');
  if (syntax !== undefined) named.push({ instruction: '# syntax', reference: syntax, refused: 'a build frontend image the engine would pull' });
  const stages: string[] = [];
  let count = 0;
  const isStage = (name: string) => stages.includes(name.toLowerCase()) || (/^\d+$/.test(name) && Number(name) < count);
  const add = (instruction: string, reference: string, onbuild: boolean) => {
    if (reference.includes('$')) named.push({ instruction, reference, refused: 'a variable, which a build argument or an ARG default could make any registry' });
    else if (onbuild) named.push({ instruction: `ONBUILD ${instruction}`, reference, refused: 'an image fetched by whatever build starts FROM this one' });
    else if (!isStage(reference) && reference.toLowerCase() !== 'scratch') named.push({ instruction, reference });
  };
  for (const line of logicalLines(containerfile)) {
    const match = /^\s*(onbuild\s+)?(from|copy|run)(?:\s+(.*))?$/is.exec(line);
    if (!match) continue;
    const onbuild = match[1] !== undefined;
    const keyword = (match[2] ?? '').toLowerCase();
    const rest = match[3] ?? '';
    const flags = leadingFlags(rest);
    if (keyword === 'from') {
      const words = rest.trim().split(/\s+/).filter((word) => !word.startsWith('--'));
      const image = words[0] ?? '';
      const platform = flags.find((flag) => /^--platform(=|$)/i.test(flag));
      if (platform) named.push({ instruction: 'FROM', reference: `${platform} ${image}`, refused: 'a --platform, which makes the engine pull that platform\'s variant' });
      else add('FROM', image, onbuild);
      if (!onbuild) {
        count += 1;
        if (words[1]?.toLowerCase() === 'as' && words[2]) stages.push(words[2].toLowerCase());
      }
    } else {
      for (const flag of flags) {
        const from = keyword === 'copy' ? /^--from=(.*)$/is.exec(flag)?.[1] : mountFrom(flag);
        if (from !== undefined) add(keyword === 'copy' ? 'COPY --from' : 'RUN --mount from', from, onbuild);
      }
    }
  }
  return named;
}
