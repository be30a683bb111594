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

  /** `prefix`: the mark row up to the cursor when the agent looked (the prompt the first typed line follows). */
  constructor(private readonly prefix: string) {}

  clone(): EchoFilter {
    const copy = new EchoFilter(this.prefix);
    copy.next = this.next;
    copy.inEcho = this.inEcho;
    return copy;
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
      const first = want.trim() === '' ? line === this.prefix.trimEnd() : line.endsWith(want.trim()) || (arriving && line.length > this.prefix.length && (this.prefix + want).startsWith(line));
      if (first) this.next = 1;
      return first;
    }
    if (echoes(line, want, this.prefix)) {
      this.next += 1;
      return true;
    }
    // A REPL that got the paste in pieces (a busy machine) may leave a blank row between two of its lines.
    if (this.inEcho && line.trim() === '' && want.trim() !== '') return true;
    if (this.inEcho) {
      const last = overdrawn(line, typed, this.next);
      if (last !== undefined) {
        this.next = last + 1;
        return true;
      }
    }
    const partial = line.replace(CONTINUATION, '');
    return arriving && partial.trim() !== '' && want.startsWith(partial);
  }
}

/** Prompts a line of a paste may follow: bash's `> `, Python's `... ` and `>>> `. */
const CONTINUATION = /^(?:> |\.\.\. |>>> )/;
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
 */
function overdrawn(line: string, typed: readonly string[], from: number): number | undefined {
  let row = '';
  for (let i = from; i < typed.length; i++) {
    const text = typed[i]!.trimEnd();
    row = text + row.slice(text.length);
    // Only a row that shows more than its last line, or three or more lines of a paste drawn over it, is taken for an overdrawn one.
    const trace = row !== text || i - from >= 2;
    if (trace && row.length === line.length && line.startsWith(text) && row === line) return i;
  }
  return undefined;
}
