/** Lines of a terminal's new output shown inline; more is shown as head and tail. */
export const INLINE_LINES = 20;
/** Lines shown before and after the elision mark when new output is longer than INLINE_LINES. */
export const HEAD_LINES = 10;
export const TAIL_LINES = 10;
/** A single line longer than this is cut (a minified file, a progress bar drawn with \r). */
export const MAX_LINE_CHARS = 2000;

export interface NewOutput {
  /** The first lines of the new output (at least HEAD_LINES of them when there are that many). */
  head: readonly string[];
  /** The last lines of the new output; may overlap `head` when the output is short. */
  tail: readonly string[];
  /** How many lines there were in all. */
  total: number;
  /** Every line, when all of them are still known (none has left the emulator unseen): elision can then be weighed. */
  all?: readonly string[];
  /**
   * Lines `first`..`last` (left out between head and tail) as lines of the terminal's files, which
   * also hold the echo of what the agent typed that the output leaves out; undefined: the same numbers.
   */
  rawRange?: (first: number, last: number) => [number, number];
}

export interface RenderedOutput {
  text: string;
  totalLines: number;
  elidedLines: number;
}

export function cutLine(line: string): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  return `${line.slice(0, MAX_LINE_CHARS)}… (${line.length - MAX_LINE_CHARS} more characters)`;
}

/**
 * New output as the agent sees it: up to INLINE_LINES lines whole; longer output as its
 * head and tail with one line that says how many lines were left out and where they are:
 * `where(first, last)` says where lines first..last (0-based) of the output are.
 */
export function renderNewOutput(output: NewOutput, where: (first: number, last: number) => string): RenderedOutput {
  const { head, tail, total } = output;
  if (total <= INLINE_LINES) {
    // head and tail together cover all of it: head is the first lines, tail the last.
    const lines = head.length >= total ? head.slice(0, total) : [...head, ...tail.slice(Math.max(0, tail.length - (total - head.length)))];
    return { text: lines.map(cutLine).join('\n'), totalLines: total, elidedLines: 0 };
  }
  const shownHead = head.slice(0, HEAD_LINES);
  const shownTail = tail.slice(Math.max(0, tail.length - TAIL_LINES));
  const elided = total - shownHead.length - shownTail.length;
  const note = `… ${elided} more line${elided === 1 ? '' : 's'} left out (${total} in all; ${where(shownHead.length, shownHead.length + elided - 1)}) …`;
  // Elision only where it saves bytes: lines no longer than the note that would stand for them are shown.
  const all = output.all?.length === total ? output.all : undefined;
  if (all && all.slice(shownHead.length, total - shownTail.length).reduce((sum, line) => sum + cutLine(line).length + 1, 0) <= note.length + 1) {
    return { text: all.map(cutLine).join('\n'), totalLines: total, elidedLines: 0 };
  }
  return {
    text: [...shownHead.map(cutLine), note, ...shownTail.map(cutLine)].join('\n'),
    totalLines: total,
    elidedLines: elided,
  };
}

/**
 * A full-screen program's screen as the agent sees it: programs such as vim paint whole
 * rows with spaces, which the emulator keeps as text; drop them at the end of each row, as
 * tmux capture-pane does (a 120-column screen of blank rows is otherwise about 5 KB).
 */
export function renderScreen(screen: string): string {
  return collapseRepeats(screen.replace(/ +$/gm, ''));
}

/** Runs this long of one identical line (vim's `~` below the text, a blank board) are shown as one line and a count. */
const REPEAT_RUN = 4;

/** A screen with each run of REPEAT_RUN or more identical lines shown once, followed by how many more there were. */
export function collapseRepeats(screen: string): string {
  const lines = screen.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    let end = i + 1;
    while (end < lines.length && lines[end] === lines[i]) end++;
    const run = end - i;
    out.push(lines[i] ?? '');
    if (run >= REPEAT_RUN) out.push(`… ${run - 1} more line${run === 2 ? '' : 's'} like that …`);
    else for (let k = 1; k < run; k++) out.push(lines[i] ?? '');
    i = end;
  }
  return out.join('\n');
}
