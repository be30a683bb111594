/**
 * The engine's own reading of a Containerfile, so that what the host checks is what the engine
 * builds. Docker 20.10's classic builder parses with moby/buildkit's dockerfile parser (v0.8):
 * parser directives at the top (`# escape=`), lines continued by the escape character (joined
 * with no space; comment and blank lines inside a continuation skipped), the instruction's name
 * split off at the first white space, then its `--flag` words (a small lexer of its own, byte by
 * byte, with quotes and backslashes). These rules are written here from that parser's source
 * (frontend/dockerfile/parser/parser.go and split_command.go); every difference is a way past the
 * check, so this file follows them character for character, Go's notion of white space included.
 */

/** One instruction as the engine's parser sees it. */
export interface Instruction {
  /** The instruction's name as typed (the engine lower-cases it: `keyword`). */
  name: string;
  /** The lower-cased name; undefined when it is not plain ASCII letters (no instruction the engine knows). */
  keyword: string | undefined;
  /** The `--flag` words, with the lexer's quoting and escapes undone, as the engine reads them. */
  flags: string[];
  /** The rest of the line after the flags, trimmed. */
  args: string;
  /** The whole logical line (continuations joined), as the engine keeps it (ONBUILD stores its tail). */
  original: string;
  /** 1-based line where it starts. */
  line: number;
}

export interface ParsedContainerfile {
  /** The escape character: `\` or, after a `# escape=` directive, a backtick. */
  escape: '\\' | '`';
  /** Parser directives at the top (lower-cased name → value): `escape`, `syntax`. */
  directives: Map<string, string>;
  instructions: Instruction[];
  /** What the engine itself refuses to parse (an unknown escape character, a repeated directive). */
  error?: string;
  /** Lines Podman's builder reads otherwise than Docker's (see PODMAN below): refused, whichever engine builds. */
  ambiguous: Array<{ line: number; text: string; why: string }>;
}

/** Go's unicode.IsSpace (bytes.TrimLeftFunc, strings.TrimSpace): ASCII white space, NEL, NBSP and Unicode's White_Space. */
const GO_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const LEADING_SPACE = new RegExp(`^[${GO_SPACE}]+`);
const TRAILING_SPACE = new RegExp(`[${GO_SPACE}]+$`);
/** The parser's reWhitespace (what splits the name from its arguments, and plain-form words). */
export const ARG_SPACE = /[\t\v\f\r ]+/;
/** Go regexp's `\s`. */
const S = '[\\t\\n\\f\\r ]';
const DIRECTIVE = new RegExp(`^#${S}*([a-zA-Z][a-zA-Z0-9]*)${S}*=${S}*([^\\n]+?)${S}*$`);
const VALID_DIRECTIVES = new Set(['escape', 'syntax']);

const trimLeft = (text: string) => text.replace(LEADING_SPACE, '');
const trimSpace = (text: string) => trimLeft(text).replace(TRAILING_SPACE, '');
const isComment = (line: string) => trimLeft(line).startsWith('#');

/** The continuation rule: the escape character last (white space after it allowed), not itself escaped. */
function continuation(escape: string): RegExp {
  const e = `\\${escape}`;
  return new RegExp(`([^${e}])${e}[ \\t]*$|^${e}[ \\t]*$`);
}

/**
 * Podman (buildah) reads with openshift/imagebuilder's older copy of the parser, which differs in
 * two places that matter: its escape directive allows only spaces and tabs (`#\fescape=\``
 * is no directive there, so `\` stays the escape character), and a line ending in two escape
 * characters is continued (the second is not taken as escaped). Either would let a line the
 * check reads as harmless be joined into `ADD http://…` on Podman: such spellings are refused.
 */
const PODMAN_ESCAPE_DIRECTIVE = /^#[ \t]*escape[ \t]*=[ \t]*[\\`][ \t]*$/i;
const podmanContinuation = (escape: string) => new RegExp(`\\${escape}[ \\t]*$`);

/** Pure: the physical lines as Go's bufio.ScanLines gives them (split at \n, one \r before it dropped; no empty last line). */
function physicalLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line, index) => {
    const own = line.endsWith('\r') ? line.slice(0, -1) : line;
    return index === 0 ? own.replace(/^\uFEFF/, '') : own;
  });
}

/** Pure: the Containerfile as the engine's parser reads it. */
export function parseContainerfile(text: string): ParsedContainerfile {
  const result: ParsedContainerfile = { escape: '\\', directives: new Map(), instructions: [], ambiguous: [] };
  let rule = continuation('\\');
  let podmanRule = podmanContinuation('\\');
  let lineNumber = 0;
  const ambiguous = (text: string, why: string) => result.ambiguous.push({ line: lineNumber, text: text.trim().slice(0, 200), why });
  let directivesDone = false;
  const directive = (line: string): void => {
    if (directivesDone) return;
    const match = DIRECTIVE.exec(line);
    const key = match?.[1]?.toLowerCase();
    if (match === null || key === undefined || !VALID_DIRECTIVES.has(key)) {
      directivesDone = true;
      return;
    }
    if (result.directives.has(key)) result.error ??= `only one ${key} parser directive can be used`;
    const value = match[2] ?? '';
    result.directives.set(key, value);
    if (key !== 'escape') return;
    if (value !== '\\' && value !== '`') result.error ??= `the escape character may only be \\ or \` (not ${JSON.stringify(value)})`;
    else {
      result.escape = value;
      rule = continuation(value);
      podmanRule = podmanContinuation(value);
      if (!PODMAN_ESCAPE_DIRECTIVE.test(line)) ambiguous(line, 'an escape directive spelled with other white space than spaces and tabs, which Podman does not read as one: write it as # escape=`');
    }
  };
  // processLine: directives are looked for on the line as read (left-trimmed for an instruction's first line); comments become empty.
  const processed = (line: string): string => {
    directive(line);
    return /^#/.test(line) ? '' : line;
  };
  const trimContinuation = (line: string): [string, boolean] => {
    if (rule.test(line)) return [line.replace(rule, '$1'), false];
    if (podmanRule.test(line)) ambiguous(line, `a line ending in two escape characters (${result.escape}${result.escape}), which Docker reads as ending there and Podman as continued on the next line`);
    return [line, true];
  };

  const lines = physicalLines(text);
  for (let index = 0; index < lines.length; index++) {
    const start = index + 1;
    lineNumber = start;
    let [line, ended] = trimContinuation(processed(trimLeft(lines[index] ?? '')));
    if (ended && line === '') continue;
    while (!ended && index + 1 < lines.length) {
      index += 1;
      lineNumber = index + 1;
      const raw = lines[index] ?? '';
      const next = processed(raw);
      if (isComment(raw) || trimLeft(next) === '') continue;
      let part: string;
      [part, ended] = trimContinuation(next);
      line += part;
    }
    result.instructions.push({ ...splitCommand(line), original: line, line: start });
  }
  return result;
}

/** splitCommand: the name, the flags and the rest. */
export function splitCommand(line: string): Omit<Instruction, 'original' | 'line'> {
  const trimmed = trimSpace(line);
  const space = ARG_SPACE.exec(trimmed);
  const name = space ? trimmed.slice(0, space.index) : trimmed;
  const rest = space ? trimmed.slice(space.index + space[0].length) : undefined;
  const keyword = /^[A-Za-z]+$/.test(name) ? name.toLowerCase() : undefined;
  if (rest === undefined) return { name, keyword, flags: [], args: '' };
  const { args, flags } = extractBuilderFlags(rest);
  return { name, keyword, flags, args: trimSpace(args) };
}

/** Go's unicode.IsSpace of one byte taken as a rune (the flag lexer reads bytes): 0x85 and 0xA0 count. */
const isSpaceByte = (byte: number) => byte === 0x20 || (byte >= 0x09 && byte <= 0x0d) || byte === 0x85 || byte === 0xa0;

/**
 * extractBuilderFlags, byte for byte: leading words that start with `--` are flags (quotes and
 * backslashes undone); the first other word, or a bare `--`, ends them.
 */
export function extractBuilderFlags(text: string): { args: string; flags: string[] } {
  const line = Buffer.from(text, 'utf8');
  const flags: string[] = [];
  const rest = (pos: number) => line.subarray(pos).toString('utf8');
  let phase: 'spaces' | 'word' | 'quote' = 'spaces';
  let word: number[] = [];
  let quote = 0;
  let blankOk = false;
  // Go appends each byte as a rune: a flag word is the bytes read as Latin-1.
  const finish = () => Buffer.from(word).toString('latin1');
  for (let pos = 0; pos <= line.length; pos++) {
    let ch = pos < line.length ? (line[pos] ?? 0) : -1;
    if (phase === 'spaces') {
      if (pos === line.length) break;
      if (isSpaceByte(ch)) continue;
      if (ch !== 0x2d || pos + 1 === line.length || line[pos + 1] !== 0x2d) return { args: rest(pos), flags };
      phase = 'word';
    }
    if (pos === line.length) {
      if (finish() !== '--' && (blankOk || word.length > 0)) flags.push(finish());
      break;
    }
    if (phase === 'word') {
      if (isSpaceByte(ch)) {
        phase = 'spaces';
        if (finish() === '--') return { args: rest(pos), flags };
        if (blankOk || word.length > 0) flags.push(finish());
        word = [];
        blankOk = false;
        continue;
      }
      if (ch === 0x27 || ch === 0x22) {
        quote = ch;
        blankOk = true;
        phase = 'quote';
        continue;
      }
      if (ch === 0x5c) {
        if (pos + 1 === line.length) continue;
        pos += 1;
        ch = line[pos] ?? 0;
      }
      word.push(ch);
      continue;
    }
    // In a quote.
    if (ch === quote) {
      phase = 'word';
      continue;
    }
    if (ch === 0x5c) {
      if (pos + 1 === line.length) {
        phase = 'word';
        continue;
      }
      pos += 1;
      ch = line[pos] ?? 0;
    }
    word.push(ch);
  }
  return { args: '', flags };
}

/** The tail an ONBUILD keeps as its trigger (parseOnBuild: `(?i)^\s*ONBUILD\s*` removed from the logical line). */
export function onbuildTrigger(original: string): string {
  return original.replace(/^[\t\n\f\r ]*onbuild[\t\n\f\r ]*/i, '');
}
