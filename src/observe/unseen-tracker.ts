import { INLINE_LINES, MAX_LINE_CHARS, type NewOutput, TAIL_LINES } from './render-new-output.js';
import type { Row, ScreenSource } from './screen-source.js';

/**
 * What the agent has not seen yet on one terminal. The high-water mark is the absolute row
 * the cursor was on when the agent last looked: everything from that row on is new. Rows
 * that leave the emulator before the agent looks are counted, and the first few kept,
 * so that a long output still shows its true head and length.
 */
export class UnseenTracker {
  markAbs: number;
  private bytesAtMark: number;
  /** The mark row's text when the agent looked (it is shown again only if it changed). */
  private markText = '';
  /** The full screen when the agent looked at a full-screen program. */
  private screenAtMark: string | undefined;
  /** The rows above the mark when the agent looked (normal screen), to see a program redraw them in place (top). */
  private above: { from: number; text: string } | undefined;
  /** Logical lines at or after the mark among rows the emulator has let go of. */
  private leftLines = 0;
  private readonly leftHead: string[] = [];

  constructor(markAbs: number, bytesAtMark: number) {
    this.markAbs = markAbs;
    this.bytesAtMark = bytesAtMark;
  }

  /** Feed rows as the emulator lets go of them (oldest first). */
  onRowsLeaving(rows: readonly Row[]): void {
    for (const row of rows) {
      if (row.abs < this.markAbs) continue;
      const startsLine = row.abs === this.markAbs || !row.wrapped || this.leftLines === 0;
      if (startsLine) {
        this.leftLines += 1;
        if (this.leftHead.length < INLINE_LINES) this.leftHead.push(clip(row.text));
      } else if (this.leftHead.length === this.leftLines) {
        this.leftHead[this.leftHead.length - 1] = clip(this.leftHead[this.leftHead.length - 1] + row.text);
      }
    }
  }

  /**
   * Anything new the agent could see? Bytes alone are not enough: a shell also writes
   * invisible things (mode switches, titles). New means a row past the mark, a changed mark
   * row, or (full-screen) a changed screen.
   */
  hasUnseen(emulator: ScreenSource): boolean {
    if (this.bytesAtMark < 0) return true;
    if (emulator.bytesWritten === this.bytesAtMark) return false;
    if (emulator.alternateScreen) return emulator.screenText() !== this.screenAtMark;
    if (emulator.contentEndAbs() > this.markAbs + 1) return true;
    const row = emulator.readRows(this.markAbs, this.markAbs + 1)[0];
    if ((row?.text.trimEnd() ?? '') !== this.markText || this.screenAtMark !== undefined) return true;
    return this.redrawnInPlace(emulator);
  }

  /**
   * A program on the normal screen rewrote rows above the cursor without adding any (top,
   * a status board): the new lines are nothing, the screen is what changed.
   */
  redrawnInPlace(emulator: ScreenSource): boolean {
    const above = this.above;
    if (emulator.alternateScreen || !above || emulator.bytesWritten === this.bytesAtMark) return false;
    if (emulator.contentEndAbs() > this.markAbs + 1 || emulator.firstHeldAbs > above.from) return false;
    return rowsText(emulator, above.from, this.markAbs) !== above.text;
  }

  /** The new output of the normal screen since the mark, as head, tail and count. */
  collect(emulator: ScreenSource): NewOutput {
    const end = emulator.contentEndAbs();
    const fresh = joinRows(emulator.readRows(Math.max(this.markAbs, emulator.flushedAbs), end), this.markAbs);
    // An empty cursor row at the end (output ended with a newline) is not a line of output.
    while (fresh.lines.length > 0 && fresh.lines[fresh.lines.length - 1] === '') fresh.lines.pop();
    let head = this.leftHead.slice();
    if (fresh.continuation !== undefined && head.length === this.leftLines && head.length > 0) {
      head[head.length - 1] = clip(head[head.length - 1] + fresh.continuation);
    }
    head = [...head, ...fresh.lines].slice(0, INLINE_LINES);
    const total = this.leftLines + fresh.lines.length;
    let tail = fresh.lines.slice(-TAIL_LINES);
    if (tail.length < TAIL_LINES && total > INLINE_LINES) {
      // The screen holds few new lines (the rest scrolled away): take the tail from older held rows too.
      const held = joinRows(emulator.readRows(Math.max(this.markAbs, emulator.firstHeldAbs), end), this.markAbs);
      while (held.lines.length > 0 && held.lines[held.lines.length - 1] === '') held.lines.pop();
      tail = held.lines.slice(-TAIL_LINES);
    }
    return { head, tail, total };
  }

  /**
   * After re-adoption (the emulator was seeded from tmux with the mark already set, so rows
   * that left during seeding were counted): what is on screen now is the baseline, unless
   * tmux's screen changed since the agent looked (`changed`).
   */
  adopted(emulator: ScreenSource, changed: boolean): void {
    this.bytesAtMark = changed ? -1 : emulator.bytesWritten;
    this.markText = emulator.readRows(this.markAbs, this.markAbs + 1)[0]?.text.trimEnd() ?? '';
    this.screenAtMark = emulator.alternateScreen ? emulator.screenText() : undefined;
    this.above = this.aboveOf(emulator);
  }

  private aboveOf(emulator: ScreenSource): { from: number; text: string } | undefined {
    if (emulator.alternateScreen) return undefined;
    const from = Math.max(emulator.firstHeldAbs, this.markAbs - ABOVE_ROWS);
    return { from, text: rowsText(emulator, from, this.markAbs) };
  }

  /** The agent has now seen everything up to the cursor. */
  markSeen(emulator: ScreenSource): void {
    this.markAbs = emulator.cursorAbs;
    this.markText = emulator.readRows(this.markAbs, this.markAbs + 1)[0]?.text.trimEnd() ?? '';
    this.screenAtMark = emulator.alternateScreen ? emulator.screenText() : undefined;
    this.above = this.aboveOf(emulator);
    this.bytesAtMark = emulator.bytesWritten;
    this.leftLines = 0;
    this.leftHead.length = 0;
  }
}

/** Rows above the mark watched for a redraw in place: a tall screen's worth. */
const ABOVE_ROWS = 200;

function rowsText(emulator: ScreenSource, from: number, to: number): string {
  return emulator
    .readRows(from, to)
    .map((r) => r.text.trimEnd())
    .join('\n');
}

function clip(text: string): string {
  return text.length > MAX_LINE_CHARS * 2 ? text.slice(0, MAX_LINE_CHARS * 2) : text;
}

/** Rows → logical lines. A first row that continues a line from before `from` is returned apart. */
function joinRows(rows: readonly Row[], markAbs: number): { lines: string[]; continuation?: string } {
  const lines: string[] = [];
  let continuation: string | undefined;
  for (const [i, row] of rows.entries()) {
    if (i === 0 && row.wrapped && row.abs > markAbs) {
      continuation = row.text;
      continue;
    }
    if (row.wrapped && lines.length > 0) lines[lines.length - 1] = clip(lines[lines.length - 1] + row.text);
    else if (row.wrapped && continuation !== undefined) continuation = clip(continuation + row.text);
    else lines.push(row.text);
  }
  return continuation === undefined ? { lines } : { lines, continuation };
}
