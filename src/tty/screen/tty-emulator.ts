import xterm from '@xterm/headless';
import serializeAddon from '@xterm/addon-serialize';
import type { Row, ScreenSource } from '../../observe/screen-source.js';
import { EXIT_STATUS_OSC, JOBS_OSC, MARK_KEY_PARAM } from './shell-integration.js';

type Terminal = InstanceType<typeof xterm.Terminal>;
type BufferNamespace = Terminal['buffer'];

/** The parts of xterm's internal buffer read on the hot path (the public API allocates a view per line). */
interface CoreLine {
  isWrapped: boolean;
  translateToString(trimRight: boolean): string;
  getTrimmedLength(): number;
}
interface CoreBuffer {
  ybase: number;
  scrollTop: number;
  lines: { length: number; get(index: number): CoreLine | undefined };
}
interface CoreBuffers {
  active: CoreBuffer;
  normal: CoreBuffer;
}

/** A shell-integration mark (OSC 133): A prompt, B input, C command start, D command end. */
export interface ShellMark {
  kind: 'A' | 'B' | 'C' | 'D';
  exitCode?: number;
  /** The terminal's key the integrated shell signs its marks with (MARK_KEY_PARAM). */
  key?: string;
  at: number;
  /** On B: the terminal's title as the prompt ends (the integrated shell sets it just before: SHELL_TITLE_PREFIX). */
  title?: string;
}

export interface TtyEmulatorOptions {
  cols: number;
  rows: number;
  /** Rows that leave the emulator's own (small) scrollback, oldest first, each exactly once. */
  onRowsLeaving?: (rows: Row[]) => void;
  /**
   * The normal screen is about to be cleared (ED 2): rows `from` to `to` (exclusive) are pushed
   * into history, as tmux's scroll-on-clear does, and the screen starts again at `to`.
   */
  onClear?: (from: number, to: number) => void;
  onMark?: (mark: ShellMark) => void;
}

/**
 * Lines the emulator itself keeps above the screen. Small on purpose (about 12 bytes a
 * cell): older rows are handed to `onRowsLeaving` (the scrollback file) in batches.
 */
export const EMULATOR_SCROLLBACK = 500;
const FLUSH_BATCH = EMULATOR_SCROLLBACK / 2;

/**
 * A headless xterm fed a TTY's raw bytes. Counts every line that scrolls off the top of
 * the normal screen, so that a row has a stable absolute number (`abs`) no matter how much
 * the emulator has forgotten, and hands rows to the caller before forgetting them.
 */
export class TtyEmulator implements ScreenSource {
  readonly terminal: Terminal;
  private readonly serializer = new serializeAddon.SerializeAddon();
  /** `terminal.buffer` checks an option on every access: read it once. */
  private readonly buffer: BufferNamespace;
  private readonly buffers: CoreBuffers;
  /** Lines that have scrolled off the top of the normal screen, ever. */
  private scrolls = 0;
  /** Rows below this have been handed to onRowsLeaving. */
  private flushedTo = 0;
  private pendingWrites = 0;
  /** Bytes written and not parsed yet. */
  private unparsed = 0;
  bytesWritten = 0;
  lastOutputAt = 0;
  /** Rows pushed into history by clears of the screen (ED 2), ever: the rest of totalScrolls is output scrolling. */
  clearScrolls = 0;

  constructor(private readonly options: TtyEmulatorOptions) {
    this.terminal = new xterm.Terminal({
      cols: options.cols,
      rows: options.rows,
      scrollback: EMULATOR_SCROLLBACK,
      allowProposedApi: true,
      convertEol: false,
      // tmux's scroll-on-clear: a full-screen erase pushes the screen into history. Match it.
      scrollOnEraseInDisplay: true,
    });
    this.terminal.loadAddon(this.serializer);
    this.buffer = this.terminal.buffer;
    this.buffers = this.countScrolls();
    // `clear` sends ED3 (erase scrollback): hand the rows over before they vanish. ED2 on the normal
    // screen pushes it into history (scrollOnEraseInDisplay): up to its last row with content, as xterm does.
    this.terminal.parser.registerCsiHandler({ final: 'J' }, (params) => {
      if (params[0] === 3) this.flushRowsAbove();
      if (params[0] === 2 && this.buffers.active === this.buffers.normal) this.beforeClear();
      return false;
    });
    this.terminal.parser.registerOscHandler(133, (data) => {
      this.onShellMark(data);
      return true;
    });
    // Kept for the B mark that follows it in the integrated shell's prompt; the title is otherwise handled as xterm does.
    for (const code of [0, 2]) {
      this.terminal.parser.registerOscHandler(code, (data) => {
        this.title = data.slice(0, 256);
        return false;
      });
    }
    this.terminal.parser.registerOscHandler(JOBS_OSC, (data) => {
      if (/^\d+$/.test(data)) this.backgroundJobs = Number(data);
      return true;
    });
    this.terminal.parser.registerOscHandler(EXIT_STATUS_OSC, (data) => {
      const announced = /^([0-9a-f]{1,64});(\d{1,3})$/.exec(data);
      if (announced) this.exitAnnouncement = { key: announced[1]!, status: Number(announced[2]) };
      return true;
    });
  }

  /** Feed raw bytes; parsing is asynchronous, `drain()` waits for it. */
  write(data: Uint8Array | string): void {
    const size = data.length;
    this.pendingWrites += 1;
    this.unparsed += size;
    if (typeof data !== 'string') this.bytesWritten += size;
    this.lastOutputAt = Date.now();
    this.terminal.write(data, () => {
      this.pendingWrites -= 1;
      this.unparsed -= size;
    });
  }

  /** Bytes written that the emulator has not parsed yet (it parses in slices, between other work). */
  get backlog(): number {
    return this.unparsed;
  }

  /**
   * Read the emulator's state right after the bytes written so far are parsed and before any
   * written later are: for numbers sampled at the same instant as another source's.
   */
  checkpoint<T>(read: () => T): Promise<T> {
    this.pendingWrites += 1;
    return new Promise((resolve) => {
      this.terminal.write('', () => {
        this.pendingWrites -= 1;
        resolve(read());
      });
    });
  }

  /**
   * Resolves once every byte written so far has been parsed: not the bytes written after
   * (output that never stops must not hold a caller forever).
   */
  drain(): Promise<void> {
    if (this.pendingWrites === 0) return Promise.resolve();
    return new Promise((resolve) => this.terminal.write('', resolve));
  }

  get cols(): number {
    return this.terminal.cols;
  }

  get rows(): number {
    return this.terminal.rows;
  }

  /** Lines scrolled off the normal screen so far (tmux's history_size, before tmux trims). */
  get totalScrolls(): number {
    return this.scrolls;
  }

  /** After seeding from tmux, adopt tmux's count of history lines as ours. */
  setTotalScrolls(count: number): void {
    const delta = count - this.scrolls;
    this.scrolls = count;
    this.flushedTo = Math.max(0, this.flushedTo + delta);
  }

  /** The last exit announcement printed (EXIT_STATUS_OSC): it counts only with the terminal's own key. */
  exitAnnouncement: { key: string; status: number } | undefined;
  /** The title last set (OSC 0 or 2), for the shell's B mark. */
  private title = '';

  /** Background jobs the integrated shell said were running at its last prompt. */
  backgroundJobs = 0;

  get alternateScreen(): boolean {
    return this.buffer.active.type === 'alternate';
  }

  get bracketedPaste(): boolean {
    return this.terminal.modes.bracketedPasteMode;
  }

  /** The program asked for application cursor keys (DECCKM): Up is ESC O A, not ESC [ A. */
  get applicationCursor(): boolean {
    return this.terminal.modes.applicationCursorKeysMode;
  }

  /** Absolute row of the normal screen's cursor. */
  get cursorAbs(): number {
    return this.scrolls + this.buffer.normal.cursorY;
  }

  get cursorX(): number {
    return this.buffer.normal.cursorX;
  }

  /** Rows below this have been handed to onRowsLeaving. */
  get flushedAbs(): number {
    return this.flushedTo;
  }

  /** The first absolute row the emulator still holds. */
  get firstHeldAbs(): number {
    return this.scrolls - this.buffer.normal.baseY;
  }

  /** Rows of the normal screen from `fromAbs` (clamped to what is held) up to `toAbs` exclusive. */
  readRows(fromAbs: number, toAbs: number): Row[] {
    const buffer = this.buffers.normal;
    const lines = buffer.lines;
    const offset = this.scrolls - buffer.ybase;
    const start = Math.max(fromAbs, offset);
    const end = Math.min(toAbs, offset + lines.length);
    const out: Row[] = [];
    let line = lines.get(start - offset);
    for (let abs = start; abs < end; abs++) {
      const next = lines.get(abs - offset + 1);
      // Keep trailing spaces of a row that wraps into the next: they are part of the line.
      if (line) out.push({ abs, text: line.translateToString(!next?.isWrapped), wrapped: line.isWrapped });
      line = next;
    }
    return out;
  }

  /** The absolute row just past the last row of the normal screen that has any text (or the cursor). */
  contentEndAbs(): number {
    const buffer = this.buffer.normal;
    let last = buffer.baseY + buffer.cursorY;
    for (let y = buffer.length - 1; y > last; y--) {
      if (buffer.getLine(y)?.translateToString(true)) {
        last = y;
        break;
      }
    }
    return this.scrolls - buffer.baseY + last + 1;
  }

  /** The visible screen of whichever buffer is active, as text, trailing blank rows removed. */
  screenText(): string {
    const buffer = this.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < this.terminal.rows; y++) lines.push(buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? '');
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    return lines.join('\n');
  }

  /** The visible screen with colours, attributes and modes (escape sequences), and up to `history` lines held above it. */
  screenAnsi(history = 0): string {
    return this.serializer.serialize({ scrollback: history });
  }

  /** Hand every row above the screen that has not been handed over yet to onRowsLeaving. */
  flushRowsAbove(): void {
    if (this.flushedTo >= this.scrolls) return;
    const rows = this.readRows(this.flushedTo, this.scrolls);
    this.flushedTo = this.scrolls;
    if (rows.length > 0) this.options.onRowsLeaving?.(rows);
  }

  resize(cols: number, rows: number): void {
    this.terminal.resize(cols, rows);
  }

  dispose(): void {
    this.terminal.dispose();
  }

  /**
   * Count lines pushed into history. The public onScroll also fires on buffer switches and
   * viewport moves, so hook the one method that scrolls a line: BufferService.scroll.
   */
  private countScrolls(): CoreBuffers {
    type Scroll = (eraseAttr: unknown, isWrapped?: boolean) => void;
    const core = (this.terminal as unknown as { _core?: { _bufferService?: { scroll?: Scroll; buffers?: CoreBuffers } } })._core;
    const service = core?._bufferService;
    const buffers = service?.buffers;
    if (typeof service?.scroll !== 'function' || !buffers?.normal?.lines) throw new Error('@xterm/headless changed: BufferService.scroll or its buffers are gone (pinned version 6.0.0)');
    const scroll = service.scroll.bind(service);
    // Called once per line of output: fixed parameters, no rest array.
    service.scroll = (eraseAttr, isWrapped) => {
      scroll(eraseAttr, isWrapped);
      this.onScroll();
    };
    return buffers;
  }

  private beforeClear(): void {
    const normal = this.buffers.normal;
    // Inside a scroll region the rows pushed are not counted as scrolls (onScroll): neither as a clear's.
    if (normal.scrollTop !== 0) return;
    let pushed = this.terminal.rows;
    while (pushed > 0 && !normal.lines.get(normal.ybase + pushed - 1)?.getTrimmedLength()) pushed -= 1;
    this.clearScrolls += pushed;
    const top = this.scrolls;
    this.options.onClear?.(top, top + pushed);
  }

  private onScroll(): void {
    const { active, normal } = this.buffers;
    // Only a scroll of the whole normal screen (top margin 0) pushes a line into history.
    if (active !== normal || normal.scrollTop !== 0) return;
    this.scrolls += 1;
    if (this.scrolls - this.flushedTo >= FLUSH_BATCH) this.flushRowsAbove();
  }

  private onShellMark(data: string): void {
    const [kind, arg, ...params] = data.split(';');
    if (kind !== 'A' && kind !== 'B' && kind !== 'C' && kind !== 'D') return;
    const mark: ShellMark = { kind, at: Date.now() };
    if (kind === 'D' && arg !== undefined && /^\d+$/.test(arg)) mark.exitCode = Number(arg);
    const key = [arg, ...params].find((p) => p?.startsWith(MARK_KEY_PARAM))?.slice(MARK_KEY_PARAM.length);
    if (key) mark.key = key;
    if (kind === 'B') mark.title = this.title;
    this.options.onMark?.(mark);
  }
}
