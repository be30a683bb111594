import { createHash } from 'node:crypto';
import type { TtyFiles, TtySnapshot } from '../observe/tty-files.js';
import { typedCommandLine } from '../observe/command-line.js';
import type { ObservedTerminal, TerminalObserver } from '../observe/terminal-observer.js';
import { UnseenTracker } from '../observe/unseen-tracker.js';
import type { PaneInfo } from './tmux-server.js';
import { type ShellMark, TtyEmulator } from './tty-emulator.js';

/** What the agent did last on a terminal, for `wait` to decide when it is done. */
export interface PendingAction {
  kind: 'open' | 'type';
  at: number;
  /** Command-finished marks seen before the action. */
  endsBefore: number;
}

/** One of the agent's terminals as the server holds it: emulator, what was seen, files, state. */
export class Tty implements ObservedTerminal {
  /** Recordings and events; set by the manager. */
  observer: TerminalObserver | undefined;
  /** Where the command line starts (the end of the prompt, mark B). */
  private inputStart: { abs: number; x: number } | undefined;
  readonly emulator: TtyEmulator;
  readonly tracker: UnseenTracker;
  files!: TtyFiles;
  program = '';
  alive = true;
  exitCode: number | undefined;
  pane: PaneInfo | undefined;
  pending: PendingAction | undefined;
  /** Started as the kernel's bash with shell integration: its first prompt will carry marks. */
  integrated = false;
  /** Command-finished marks (OSC 133 D) so far, and the latest one. */
  commandEnds = 0;
  lastEnd: { exitCode?: number; durationMs?: number; at: number } | undefined;
  /** The end reported to the agent last, so an exit code is told once. */
  reportedEnds = 0;
  private commandStartedAt: number | undefined;
  commandRunning = false;
  lastActivity = Date.now();
  readingKeys: { key: string; value: boolean | undefined } | undefined;
  /** The foreground program found with ps (when tmux can only name the shell). */
  foreground: { pid: number; at: number; name: string } | undefined;
  /** tmux's history_size when the mark was set (to notice tmux dropping old lines). */
  markHistory = 0;
  markDigest = '';
  markRowTmux = 0;

  constructor(
    readonly number: number,
    readonly command: string,
    readonly paneId: string,
    readonly openedAt: string,
    size: { cols: number; rows: number },
    markAbs: number,
    private readonly onActivity: () => void,
  ) {
    this.tracker = new UnseenTracker(markAbs, 0);
    this.emulator = new TtyEmulator({
      cols: size.cols,
      rows: size.rows,
      onRowsLeaving: (rows) => {
        this.tracker.onRowsLeaving(rows);
        this.files?.appendRows(rows);
      },
      onMark: (mark) => this.onMark(mark),
    });
  }

  onOutput(data: Buffer): void {
    this.emulator.write(data);
    this.files.appendRaw(data);
    this.observer?.output(this, data);
    this.lastActivity = Date.now();
    this.onActivity();
  }

  get cols(): number {
    return this.emulator.cols;
  }

  get rows(): number {
    return this.emulator.rows;
  }

  screenAnsi(): string {
    return this.emulator.screenAnsi();
  }

  hasUnseen(): boolean {
    return this.tracker.hasUnseen(this.emulator) || (!this.alive && this.pendingExitReport);
  }

  /** A dead terminal is reported once, then closed. */
  pendingExitReport = false;

  /** When tmux first said this pane is dead but did not know its exit status yet. */
  deadWithoutStatusSince: number | undefined;

  snapshot(): TtySnapshot {
    return {
      screen: this.emulator.screenText(),
      screenAnsi: this.emulator.screenAnsi(),
      status: {
        tty: this.number,
        command: this.command,
        program: this.program,
        alive: this.alive,
        ...(this.exitCode === undefined ? {} : { exitCode: this.exitCode }),
        lastActivity: new Date(this.lastActivity).toISOString(),
        highWaterMark: this.markRowTmux,
        unseen: this.tracker.hasUnseen(this.emulator),
        cols: this.emulator.cols,
        rows: this.emulator.rows,
        fullScreen: this.emulator.alternateScreen,
      },
    };
  }

  /** A digest of what is on the screen and where the cursor is, to tell later whether anything changed. */
  digest(pane: Pick<PaneInfo, 'historySize' | 'cursorX' | 'cursorY'>): string {
    return createHash('sha256')
      .update(`${pane.historySize}:${pane.cursorX}:${pane.cursorY}\n${this.emulator.screenText()}`)
      .digest('hex')
      .slice(0, 24);
  }

  /** The last D mark, waiting for the prompt to be drawn (mark B) before it counts. */
  private endingAt: { exitCode?: number; durationMs?: number; at: number } | undefined;

  /** A D mark whose prompt never ended with B (a PS1 we could not mark): count it after a short grace. */
  settleEnding(now: number, quietMs: number): void {
    if (this.endingAt && now - this.endingAt.at > 1000 && quietMs > 300) this.finishEnding();
  }

  private finishEnding(): void {
    if (!this.endingAt) return;
    this.commandEnds += 1;
    this.lastEnd = this.endingAt;
    this.endingAt = undefined;
  }

  private onMark(mark: ShellMark): void {
    if (mark.kind === 'C') {
      this.commandStartedAt = mark.at;
      this.commandRunning = true;
      this.observer?.commandStarted(this, typedCommandLine(this.emulator, this.inputStart));
    } else if (mark.kind === 'D') {
      const durationMs = this.commandStartedAt === undefined || !this.commandRunning ? undefined : mark.at - this.commandStartedAt;
      this.endingAt = {
        at: mark.at,
        ...(mark.exitCode === undefined ? {} : { exitCode: mark.exitCode }),
        ...(durationMs === undefined ? {} : { durationMs }),
      };
      this.commandRunning = false;
      this.commandStartedAt = undefined;
      this.observer?.commandFinished(this, mark.exitCode, durationMs);
    } else if (mark.kind === 'B') {
      this.inputStart = { abs: this.emulator.cursorAbs, x: this.emulator.cursorX };
      this.finishEnding();
    }
    this.onActivity();
  }
}
