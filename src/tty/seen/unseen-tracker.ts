import { EchoFilter } from '../../observe/echo-filter.js';
import { INLINE_LINES, MAX_LINE_CHARS, type NewOutput, TAIL_LINES } from '../../observe/render-new-output.js';
import type { Row, ScreenSource } from '../../observe/screen-source.js';

/**
 * How what changed since the agent looked reads: `lines`, new output on a line-oriented
 * terminal; `screen`, a full-screen program's screen (the alternate screen), or the normal
 * screen redrawn in place (top): the screen is the news, not its rows one by one.
 */
export type ChangeKind = 'none' | 'lines' | 'screen';

/** The normal screen as the agent last saw it: rows `from` (its top) to `end` (exclusive) while `scrolls` rows had scrolled away. */
interface SeenRows {
  from: number;
  end: number;
  scrolls: number;
  text: string;
  /** The whole screen, as screenText gives it. */
  screen: string;
}

/** A line of new output and its number among all new lines, echo included (where it is in the files). */
interface Numbered {
  text: string;
  raw: number;
}

/**
 * What the agent has not seen yet on one terminal. The high-water mark is the absolute row
 * the cursor was on when the agent last looked: everything from that row on is new. Rows
 * that leave the emulator before the agent looks are counted, and the first and last few kept,
 * so that a long output still shows its true head, tail and length. The echo of what the agent
 * typed (`typed`) is left out as the lines come, however long the paste.
 */
export class UnseenTracker {
  markAbs: number;
  private bytesAtMark: number;
  /** The mark row up to the cursor when the agent looked: what it types next is echoed after it. */
  private ownMarkPrefix = '';
  /** The full screen when the agent looked at a full-screen program. */
  private screenAtMark: string | undefined;
  /** The normal screen's rows when the agent looked: only rows on the screen can be redrawn in place. */
  private seen: SeenRows | undefined;
  /** Rows cleared into history when the agent looked (their count grows with every clear of the screen). */
  private clearScrollsAtMark = 0;
  /**
   * The first clear of the screen since the agent looked: `repaint` when all it pushed into history
   * was what the agent had seen or a redraw of it (top's view after a key); `lines` when it pushed
   * new lines (`make && clear`), which are news as lines.
   */
  private cleared: 'repaint' | 'lines' | undefined;
  /** Logical lines at or after the mark among rows the emulator has let go of, echo left out. */
  private leftLines = 0;
  private readonly leftHead: Numbered[] = [];
  private leftTail: Numbered[] = [];
  /** Lines that left, echo included. */
  private leftRaw = 0;
  /** The last line that left: rows still to come may continue it. */
  private leftPending: string | undefined;
  /**
   * The echo followed so far; `carried`: typed lines whose echo was still coming when the agent
   * looked (the echo that follows is not news either), and those with the lines typed since (`all`).
   */
  private echo: { filter: EchoFilter; carried: readonly string[]; all?: { fresh: readonly string[]; lines: readonly string[] } } = { filter: new EchoFilter(''), carried: [] };

  constructor(
    markAbs: number,
    bytesAtMark: number,
    private readonly typedSinceLook: () => readonly string[] = () => [],
  ) {
    this.markAbs = markAbs;
    this.bytesAtMark = bytesAtMark;
  }

  /** The lines whose echo is left out: those still coming when the agent looked, then those typed since. */
  private typed(): readonly string[] {
    const fresh = this.typedSinceLook();
    const echo = this.echo;
    if (echo.carried.length === 0) return fresh;
    if (echo.all?.fresh !== fresh) echo.all = { fresh, lines: [...echo.carried, ...fresh] };
    return echo.all.lines;
  }

  get markPrefix(): string {
    return this.ownMarkPrefix;
  }

  /** Feed rows as the emulator lets go of them (oldest first). */
  onRowsLeaving(rows: readonly Row[]): void {
    for (const row of rows) {
      if (row.abs < this.markAbs) continue;
      const startsLine = row.abs === this.markAbs || !row.wrapped || this.leftPending === undefined;
      if (!startsLine) {
        this.leftPending = clip(this.leftPending + row.text);
        continue;
      }
      if (this.leftPending !== undefined) this.leave(this.leftPending);
      this.leftPending = row.text;
    }
  }

  /** A whole line left the emulator: echo, or one more line of output. */
  private leave(text: string): void {
    const raw = this.leftRaw++;
    if (this.echo.filter.isEcho(text, this.typed())) return;
    this.leftLines += 1;
    const line = { text: clip(text), raw };
    if (this.leftHead.length < INLINE_LINES) this.leftHead.push(line);
    this.leftTail.push(line);
    if (this.leftTail.length > TAIL_LINES * 4) this.leftTail = this.leftTail.slice(-TAIL_LINES);
  }

  /**
   * Anything new the agent could see? Bytes alone are not enough: a shell also writes
   * invisible things (mode switches, titles), and a program may redraw what was already
   * there. New means a row scrolled or added, a row of the screen that reads differently,
   * or (full-screen) a changed screen.
   */
  hasUnseen(emulator: ScreenSource): boolean {
    if (this.bytesAtMark < 0) return true;
    if (emulator.bytesWritten === this.bytesAtMark) return false;
    if (emulator.alternateScreen) return emulator.screenText() !== this.screenAtMark;
    const seen = this.seen;
    if (!seen || this.screenAtMark !== undefined || this.cleared === 'lines') return true;
    if (this.cleared === 'repaint') return this.scrolledByOutput(emulator, seen) || emulator.screenText() !== seen.screen;
    if (this.moved(emulator, seen)) return true;
    return rowsText(emulator, seen.from, Math.max(seen.end, emulator.contentEndAbs())) !== seen.text;
  }

  /**
   * The screen is about to be cleared, rows `from` to `to` pushed into history (ED 2, see
   * TtyEmulator.onClear). The first clear since the agent looked decides how the news reads; a
   * repaint that leaves the mark below the new screen's top moves the mark up to it (true), so
   * that what is drawn from there on is new.
   */
  onClear(emulator: ScreenSource, to: number): boolean {
    if (this.cleared !== undefined || emulator.alternateScreen) return false;
    if (this.changeKind(emulator) === 'lines') {
      this.cleared = 'lines';
      return false;
    }
    this.cleared = 'repaint';
    if (to >= this.markAbs) return false;
    this.markAbs = to;
    this.forgetLeft();
    return true;
  }

  /**
   * A program on the normal screen rewrote rows the agent had seen, other than the cursor's,
   * without scrolling (top, whose cursor sits above its process list; a status board; a
   * multi-line progress display): the screen is what changed, whichever rows it was.
   */
  redrawnInPlace(emulator: ScreenSource): boolean {
    const seen = this.seen;
    if (emulator.alternateScreen || !seen || this.screenAtMark !== undefined || emulator.bytesWritten === this.bytesAtMark || this.cleared === 'lines') return false;
    // Cleared and drawn again, with nothing scrolled by output since: a repaint.
    if (this.cleared === 'repaint') return !this.scrolledByOutput(emulator, seen);
    if (this.moved(emulator, seen)) return false;
    const before = seen.text.split('\n');
    const now = rowsText(emulator, seen.from, seen.end).split('\n');
    return before.some((text, i) => seen.from + i !== this.markAbs && now[i] !== text);
  }

  /** How the news reads: none, new lines, or a changed screen. */
  changeKind(emulator: ScreenSource): ChangeKind {
    if (!this.hasUnseen(emulator)) return 'none';
    return emulator.alternateScreen || this.redrawnInPlace(emulator) ? 'screen' : 'lines';
  }

  /** Only the row the cursor was on changed (a progress bar or spinner redrawn with \r), nothing scrolled or added. */
  onlyMarkRowChanged(emulator: ScreenSource): boolean {
    const seen = this.seen;
    if (emulator.alternateScreen || !seen || this.cleared !== undefined || this.moved(emulator, seen) || emulator.contentEndAbs() > Math.max(seen.end, this.markAbs + 1)) return false;
    return !this.redrawnInPlace(emulator);
  }

  /** The new output of the normal screen since the mark, as head, tail and count (and every line, when all are still held). */
  collect(emulator: ScreenSource): NewOutput {
    const { lines, echoed } = this.follow(emulator);
    const shown: Numbered[] = [];
    for (const [i, text] of lines.entries()) if (!echoed[i]) shown.push({ text: clip(text), raw: this.leftRaw + i });
    const total = this.leftLines + shown.length;
    const known = this.leftHead.length === this.leftLines ? [...this.leftHead, ...shown] : undefined;
    const head = [...this.leftHead, ...shown].slice(0, INLINE_LINES);
    const tail = [...this.leftTail, ...shown].slice(-TAIL_LINES);
    const text = (numbered: readonly Numbered[]) => numbered.map((line) => line.text);
    // Lines left out of a report between head and tail, as numbers among all new lines (echo included: the files hold it).
    const rawRange = (first: number, last: number): [number, number] => {
      const before = first > 0 ? head[Math.min(first, head.length) - 1]?.raw : undefined;
      const after = tail[last + 1 - (total - tail.length)]?.raw;
      return [before === undefined ? 0 : before + 1, after === undefined ? this.leftRaw + lines.length - 1 : after - 1];
    };
    const output: NewOutput = { head: text(head), tail: text(tail), total, rawRange };
    return known ? { ...output, all: text(known) } : output;
  }

  /**
   * How far the echo of what the agent typed has come: `complete` once every typed line has been
   * echoed; `answered` once a line that is not echo follows the last echo (the program's prompt or
   * output after the Enter). Lines still being drawn are judged as they read now.
   */
  echoProgress(emulator: ScreenSource): { complete: boolean; answered: boolean } {
    const { lines, echoed, filter } = this.follow(emulator);
    const lastEcho = echoed.lastIndexOf(true);
    const answered = lines.some((line, i) => i > lastEcho && !echoed[i] && line.trim() !== '');
    return { complete: filter.complete(this.typed()), answered };
  }

  /** The new lines the emulator still holds, the echo of what was typed left out: for a pattern the agent waits for. */
  heldOutput(emulator: ScreenSource): string[] {
    const { lines, echoed } = this.follow(emulator);
    return lines.filter((_, i) => !echoed[i]).map((line) => line.trimEnd());
  }

  /** The lines since the mark still held (the one that left last first, the cursor's last), each judged echo or not. */
  private follow(emulator: ScreenSource): { lines: string[]; echoed: boolean[]; filter: EchoFilter } {
    const end = emulator.contentEndAbs();
    const fresh = joinRows(emulator.readRows(Math.max(this.markAbs, emulator.flushedAbs), end), this.markAbs);
    // An empty cursor row at the end (output ended with a newline) is not a line of output.
    while (fresh.lines.length > 0 && fresh.lines[fresh.lines.length - 1] === '') fresh.lines.pop();
    // The last line that left may go on on the screen; then the screen's lines, the cursor's last (its echo may be arriving).
    const pending = this.leftPending === undefined ? [] : [clip(this.leftPending + (fresh.continuation ?? ''))];
    const lines = [...pending, ...fresh.lines];
    const filter = this.echo.filter.clone();
    const typed = this.typed();
    const echoed = lines.map((text, i) => filter.isEcho(text, typed, i === lines.length - 1));
    return { lines, echoed, filter };
  }

  /**
   * After re-adoption (the emulator was seeded from tmux with the mark already set, so rows
   * that left during seeding were counted): what is on screen now is the baseline, unless
   * tmux's screen changed since the agent looked (`changed`).
   */
  adopted(emulator: ScreenSource, changed: boolean): void {
    this.bytesAtMark = changed ? -1 : emulator.bytesWritten;
    this.remember(emulator);
    this.echo = { filter: new EchoFilter(this.ownMarkPrefix), carried: [] };
  }

  /** The agent has now seen everything up to the cursor (the echo of its keys that is still to come is not news). */
  markSeen(emulator: ScreenSource): void {
    const rest = emulator.alternateScreen ? [] : this.follow(emulator).filter.rest(this.typed());
    this.markAbs = emulator.cursorAbs;
    this.remember(emulator);
    this.bytesAtMark = emulator.bytesWritten;
    this.forgetLeft();
    this.echo = { filter: new EchoFilter(this.ownMarkPrefix, rest.length > 0), carried: rest };
  }

  /** Rows at or after the mark have left the emulator since the agent looked. */
  private anyLeft(): boolean {
    return this.leftPending !== undefined;
  }

  private forgetLeft(): void {
    this.leftLines = 0;
    this.leftHead.length = 0;
    this.leftTail = [];
    this.leftRaw = 0;
    this.leftPending = undefined;
  }

  private remember(emulator: ScreenSource): void {
    this.ownMarkPrefix = (emulator.readRows(this.markAbs, this.markAbs + 1)[0]?.text ?? '').slice(0, emulator.cursorX);
    this.screenAtMark = emulator.alternateScreen ? emulator.screenText() : undefined;
    // The screen's top, or the mark when it is above it (still held: a mark left far above after a restart is not read row by row).
    const from = Math.max(emulator.firstHeldAbs, Math.min(emulator.totalScrolls, this.markAbs));
    const end = Math.max(this.markAbs + 1, emulator.contentEndAbs());
    this.seen = emulator.alternateScreen ? undefined : { from, end, scrolls: emulator.totalScrolls, text: rowsText(emulator, from, end), screen: emulator.screenText() };
    this.clearScrollsAtMark = emulator.clearScrolls;
    this.cleared = undefined;
  }

  /** Rows scrolled since the agent looked by output, not by clears of the screen. */
  private scrolledByOutput(emulator: ScreenSource, seen: SeenRows): boolean {
    return emulator.totalScrolls - seen.scrolls > emulator.clearScrolls - this.clearScrollsAtMark || this.anyLeft();
  }

  /** Rows scrolled or left the emulator since the agent looked: the seen rows are not where they were. */
  private moved(emulator: ScreenSource, seen: SeenRows): boolean {
    return emulator.totalScrolls !== seen.scrolls || this.anyLeft();
  }
}

/** Rows `from` to `to` (exclusive), one line each; a row the emulator does not hold reads as empty. */
function rowsText(emulator: ScreenSource, from: number, to: number): string {
  const lines = Array.from({ length: Math.max(0, to - from) }, () => '');
  for (const row of emulator.readRows(from, to)) lines[row.abs - from] = row.text.trimEnd();
  return lines.join('\n');
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
