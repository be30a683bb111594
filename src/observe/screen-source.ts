/** One row of the normal screen, numbered from the first line the terminal ever showed. */
export interface Row {
  abs: number;
  text: string;
  /** This row continues the previous one (a long line that wrapped). */
  wrapped: boolean;
}

/**
 * What `observe` reads of a terminal's emulated screen. The emulator (src/tty/screen/tty-emulator.ts)
 * provides it; observe depends on this shape only, so tty may use observe and not the reverse.
 */
export interface ScreenSource {
  readonly bytesWritten: number;
  readonly alternateScreen: boolean;
  /** The absolute row of the cursor. */
  readonly cursorAbs: number;
  /** The cursor's column on the normal screen. */
  readonly cursorX: number;
  /** Rows scrolled off the top of the normal screen so far: unchanged, every row is where it was. */
  readonly totalScrolls: number;
  /** Of totalScrolls, the rows pushed into history by clears of the screen. */
  readonly clearScrolls: number;
  /** Rows below this were handed over (to the scrollback file) and are no longer held. */
  readonly flushedAbs: number;
  /** The oldest row still held. */
  readonly firstHeldAbs: number;
  readRows(fromAbs: number, toAbs: number): Row[];
  /** One past the last row with content (or the cursor row). */
  contentEndAbs(): number;
  screenText(): string;
}
