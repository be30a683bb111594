/**
 * Which of a terminal's new lines are the echo of what the agent typed, followed line by line
 * as they come (lines that leave the emulator are seen once): a paste of any length is left out,
 * however the program echoes it, and the rest is counted exactly.
 *
 * Echo comes in the order typed, and before what it causes: each new line is either the echo of
 * the next typed line (after the prompt at the mark, a continuation prompt such as `> `,
 * `... ` or `>>> `, or none) or output, which leaves the typed line waiting (a REPL echoes a
 * line, prints what it did, then echoes the next). Readline drawing a paste taller than the
 * screen writes its last lines over one row with `\r`: that row reads as those lines laid over
 * one another (`C27EOFne 200: ...`), and is echo too.
 */
export class EchoFilter {
  /** The typed line the next echo stands for. */
  private next = 0;
  /** The line before was echo: a blank row or an overdrawn one may follow inside it. */
  private inEcho = false;

  /**
   * `prefix`: the mark row up to the cursor when the agent looked (the prompt the first typed line
   * follows). `midway`: the agent looked while the echo of lines typed before was still coming;
   * the first typed line may go on the mark row's echo (drawn over it, or finishing it).
   */
  constructor(
    private readonly prefix: string,
    midway = false,
  ) {
    this.inEcho = midway;
  }

  clone(): EchoFilter {
    const copy = new EchoFilter(this.prefix);
    copy.next = this.next;
    copy.inEcho = this.inEcho;
    return copy;
  }

  /** Has every line of `typed` been echoed? */
  complete(typed: readonly string[]): boolean {
    return this.next >= typed.length;
  }

  /** The lines of `typed` whose echo has not come yet, when the last line judged was echo (the echo is midway); else none. */
  rest(typed: readonly string[]): readonly string[] {
    return this.inEcho ? typed.slice(this.next) : [];
  }

  /**
   * Is `line`, the next new line, echo of `typed` (the lines typed since the agent looked)?
   * `arriving`: it is the cursor's line, whose echo may still be coming in.
   */
  isEcho(line: string, typed: readonly string[], arriving = false): boolean {
    const echo = this.match(line.trimEnd(), typed, arriving);
    this.inEcho = echo;
    return echo;
  }

  private match(line: string, typed: readonly string[], arriving: boolean): boolean {
    const want = typed[this.next];
    if (want === undefined) return false;
    if (this.next === 0) {
      if (want.trim() === '' ? line === this.prefix.trimEnd() : line.endsWith(want.trim())) {
        this.next = 1;
        return true;
      }
      // Still being drawn: echo, but not the whole line yet.
      if (arriving && line.length > this.prefix.length && (this.prefix + want).startsWith(line)) return true;
      if (!this.inEcho) return false;
    }
    if (echoes(line, want, this.prefix)) {
      this.next += 1;
      return true;
    }
    // A REPL that got the paste in pieces (a busy machine) may leave a blank row between two of its lines.
    if (this.inEcho && line.trim() === '' && want.trim() !== '') return true;
    if (this.inEcho) {
      const last = overdrawn(line, typed, this.next, arriving);
      if (last !== undefined) {
        this.next = last + 1;
        return true;
      }
    }
    const partial = line.replace(CONTINUATION, '');
    return arriving && partial.trim() !== '' && want.startsWith(partial);
  }
}

/** Prompts a line of a paste may follow: bash's `> `, Python's `... ` and `>>> ` (readline may leave a blank before it). */
const CONTINUATION = /^ ?(?:> |\.\.\. |>>> )/;
/** A row with nothing but a prompt: the echo of an empty line. */
const PROMPT_ONLY = /^(?:>|\.\.\.|>>>)?$/;

/** A row with nothing but a prompt (`>`, `...`, `>>>`): after the agent's own lines, the program asking for the next one. */
export function promptOnly(line: string): boolean {
  return PROMPT_ONLY.test(line.trim());
}

/** Does `line` echo the typed line `want` (after a prompt, or none)? */
function echoes(line: string, want: string, prefix: string): boolean {
  if (want.trim() === '') return promptOnly(line) || line === prefix.trimEnd();
  return line.endsWith(want.trimEnd());
}

/**
 * The typed lines from `from` on laid over one another on one row, as readline draws the end
 * of a paste taller than the screen: the index of the last of them when `line` reads so.
 * `arriving` (the cursor's row, still being drawn): two lines laid over each other count, and
 * so does a line only partly drawn over what the row showed (readline draws the last screenful
 * over that row once more): then the index before `from` (that echo is not done).
 */
function overdrawn(line: string, typed: readonly string[], from: number, arriving: boolean): number | undefined {
  let row = '';
  let head = 0;
  let tail = 0;
  for (let i = from; i < typed.length; i++) {
    const text = typed[i]!.trimEnd();
    row = text + row.slice(text.length);
    // Only a row that shows more than its last line, or three or more lines of a paste drawn over it, is taken for an overdrawn one.
    const trace = row !== text || i - from >= (arriving ? 1 : 2);
    if (trace && row.length === line.length && line.startsWith(text) && row === line) return i;
    if (arriving) {
      head = Math.max(head, commonLength(line, text, 1));
      if (row.length === line.length) tail = Math.max(tail, commonLength(line, row, -1));
    }
  }
  // The start of one typed line over the rest of the row as the paste's lines left it.
  return arriving && head >= 2 && head + tail >= line.length ? from - 1 : undefined;
}

/** How many characters `a` and `b` share at their start (`direction` 1) or their end (-1). */
function commonLength(a: string, b: string, direction: 1 | -1): number {
  const max = Math.min(a.length, b.length);
  let n = 0;
  while (n < max && (direction === 1 ? a[n] === b[n] : a[a.length - 1 - n] === b[b.length - 1 - n])) n++;
  return n;
}
