import { createHash } from 'node:crypto';
import { type SentInput, typedText } from '../../observe/echo.js';
import type { TtyFiles, TtySnapshot } from '../../observe/tty-files.js';
import { UnseenTracker } from '../seen/unseen-tracker.js';
import { typedCommandLine } from '../screen/command-line.js';
import { programMatches } from '../probe/program-name.js';
import { SeenMarks } from '../seen/seen-marks.js';
import type { TerminalState } from '../host/terminal-host.js';
import type { TtyEventSource } from '../api/tty-events.js';
import { type ShellMark, TtyEmulator } from '../screen/tty-emulator.js';
import type { UntilPattern } from './until.js';

/** What the agent did last on a terminal, for `wait` to decide when it is done. */
export interface PendingAction {
  kind: 'open' | 'type';
  at: number;
  /** Command-finished marks seen before the action. */
  endsBefore: number;
}

export interface CommandEnd {
  exitCode?: number;
  durationMs?: number;
  at: number;
}

export interface TtyIdentity {
  number: number;
  command: string;
  /** The host's id of the terminal. */
  id: string;
  openedAt: string;
  cols: number;
  rows: number;
  /** The key the terminal's last process announces its exit status with (none: terminals from before keys). */
  statusKey?: string | undefined;
}

/** A full-screen program's normal screen cursor is the one the host saved. */
export function normalCursor(state: TerminalState): { historySize: number; cursorX: number; cursorY: number } {
  return state.alternateOn
    ? { historySize: state.historySize, cursorX: state.alternateSavedX, cursorY: state.alternateSavedY }
    : { historySize: state.historySize, cursorX: state.cursorX, cursorY: state.cursorY };
}

/**
 * One of the agent's terminals as the server holds it: its emulator, what the agent has
 * seen, its files and what is known of its process. Its state changes only through its
 * methods, each named for what happened.
 */
export class Tty {
  readonly number: number;
  readonly command: string;
  readonly id: string;
  readonly openedAt: string;
  /** Its shell signs its marks with the key: unsigned ones are forged from now on. */
  private keyedMarks = false;
  readonly statusKey: string | undefined;
  readonly emulator: TtyEmulator;
  readonly tracker: UnseenTracker;
  private ownFiles: TtyFiles | undefined;
  private ownProgram = '';
  private ownAlive = true;
  private ownExitCode: number | undefined;
  private ownState: TerminalState | undefined;
  private ownPending: PendingAction | undefined;
  private ownIntegrated = false;
  private ends = 0;
  private ownLastEnd: CommandEnd | undefined;
  private ownReportedEnds = 0;
  private commandStartedAt: number | undefined;
  /** Where the command line starts: the end of the prompt (mark B). */
  private inputStart: { abs: number; x: number } | undefined;
  private running = false;
  private ownLastActivity = Date.now();
  private readingKeys: { key: string; value: boolean | undefined } | undefined;
  private foreground: { pid: number; at: number; name: string } | undefined;
  /** The program that asks for input, while the host names the first command of its pipeline (`seq 1000000 | less`). */
  private asking: { leader: string; name: string } | undefined;
  /** What the agent has seen, reply by reply, in the host's numbering when saved. */
  readonly marks = new SeenMarks();
  /** The last D mark, waiting for the prompt to be drawn (mark B) before it counts. */
  private endingAt: CommandEnd | undefined;
  /** A dead terminal is reported once, then closed. */
  private exitUnreported = false;
  /** Background processes wait last named under this idle shell ("sleep (pid 42, 1 MB)"). */
  private ownBackground: readonly string[] = [];
  get background(): readonly string[] {
    return this.ownBackground;
  }
  /** What runs in the background under the idle shell now (none: its jobs ended). */
  runsInBackground(names: readonly string[]): void {
    this.ownBackground = names;
  }
  /** Set at open for a program the kernel cannot judge: a wait on this terminal ends when it matches. */
  until: UntilPattern | undefined;
  /** What the agent typed here since a wait last showed it this terminal (its echo is not news), and whether it opened it since. */
  private sentSinceLook: SentInput[] = [];
  private openedSinceLook = false;
  /** waitingForInput was fired since the last output or action. */
  private waitingAnnounced = false;
  /** When the host first said the terminal is dead but did not know its exit status yet. */
  private deadWithoutStatusSince: number | undefined;

  constructor(
    identity: TtyIdentity,
    markAbs: number,
    private readonly events: TtyEventSource,
    private readonly onActivity: () => void,
  ) {
    this.number = identity.number;
    this.command = identity.command;
    this.id = identity.id;
    this.openedAt = identity.openedAt;
    this.statusKey = identity.statusKey;
    this.tracker = new UnseenTracker(markAbs, 0);
    this.emulator = new TtyEmulator({
      cols: identity.cols,
      rows: identity.rows,
      onRowsLeaving: (rows) => {
        this.tracker.onRowsLeaving(rows);
        this.ownFiles?.appendRows(rows);
      },
      // A repaint moved the mark up to the new screen's top: the files count new lines from there.
      onClear: (_from, to) => {
        if (this.tracker.onClear(this.emulator, to)) this.ownFiles?.anchorAt(this.tracker.markAbs);
      },
      onMark: (mark) => this.onMark(mark),
    });
  }

  get files(): TtyFiles {
    if (!this.ownFiles) throw new Error(`TTY ${this.number} has no files yet`);
    return this.ownFiles;
  }
  get program(): string {
    return this.ownProgram;
  }
  get alive(): boolean {
    return this.ownAlive;
  }
  get exitCode(): number | undefined {
    return this.ownExitCode;
  }
  /** The host's latest description of the terminal. */
  get state(): TerminalState | undefined {
    return this.ownState;
  }
  get pending(): PendingAction | undefined {
    return this.ownPending;
  }
  /** Started as the kernel's bash with shell integration: its first prompt will carry marks. */
  get integrated(): boolean {
    return this.ownIntegrated;
  }
  /** Command-finished marks (OSC 133 D) so far. */
  get commandEnds(): number {
    return this.ends;
  }
  get lastEnd(): CommandEnd | undefined {
    return this.ownLastEnd;
  }
  /** The command end reported to the agent last, so an exit code is told once. */
  get reportedEnds(): number {
    return this.ownReportedEnds;
  }
  get commandRunning(): boolean {
    return this.running;
  }
  /** When the command its shell runs began (saved, so that a later server reports its end and exit status). */
  get runningSince(): number | undefined {
    return this.running ? this.commandStartedAt : undefined;
  }
  /** Taken over idle at its prompt: the next command line starts at the cursor (this server saw no prompt mark yet). */
  adoptedAtPrompt(): void {
    if (!this.running && !this.emulator.alternateScreen) this.inputStart ??= { abs: this.emulator.cursorAbs, x: this.emulator.cursorX };
  }

  /** A command an earlier server saw start runs on. */
  resumeCommand(startedAt: number): void {
    this.running = true;
    this.commandStartedAt = startedAt;
  }

  /** A command an earlier server saw start ended while no server read the terminal (its shell's title tells how). */
  endedUnseen(startedAt: number, end: { exitCode: number; endedAt: number }): void {
    this.endingAt = { at: end.endedAt, exitCode: end.exitCode, durationMs: Math.max(0, end.endedAt - startedAt) };
    this.finishEnding();
  }
  get lastActivity(): number {
    return this.ownLastActivity;
  }

  attachFiles(files: TtyFiles): void {
    this.ownFiles = files;
    files.anchorAt(this.tracker.markAbs);
  }

  onOutput(data: Buffer): void {
    this.emulator.write(data);
    this.ownFiles?.appendRaw(data);
    this.ownLastActivity = Date.now();
    this.waitingAnnounced = false;
    this.events.output.fire({ tty: this.number, data });
    this.onActivity();
  }

  hasUnseen(): boolean {
    return this.tracker.hasUnseen(this.emulator) || (!this.ownAlive && this.exitUnreported) || this.marks.gone !== undefined;
  }

  /** The agent opened it (`integrated`: the kernel's bash) or typed `sent` into it. */
  acted(kind: PendingAction['kind'], integrated = false, sent?: SentInput): void {
    this.ownPending = { kind, at: Date.now(), endsBefore: this.ends };
    if (kind === 'open') {
      this.ownIntegrated = integrated;
      this.openedSinceLook = true;
    }
    // Bounded: an agent that types without ever looking gains nothing from more.
    if (sent && this.sentSinceLook.length < 64) this.sentSinceLook.push(sent);
    this.readingKeys = undefined;
    this.ownLastActivity = Date.now();
    this.waitingAnnounced = false;
  }

  /** What the agent typed since it last saw this terminal, in order. */
  get sent(): readonly SentInput[] {
    return this.sentSinceLook;
  }

  /** The text typed since the agent last saw this terminal, one line per line typed: its echo is left out of the report. */
  get typedSinceLook(): string | undefined {
    return typedText(this.sentSinceLook);
  }

  /** The agent opened or typed into this terminal after it last saw it: what changed since may be its doing. */
  get actedSinceLook(): boolean {
    return this.openedSinceLook || this.sentSinceLook.length > 0;
  }

  /** wait() judged it idle, waiting for keys: tell listeners once per quiet spell. */
  waitingForInput(): void {
    if (this.waitingAnnounced) return;
    this.waitingAnnounced = true;
    this.events.waitingForInput.fire({ tty: this.number, program: this.ownProgram });
  }

  /** Nothing to report: what the agent started is over. */
  settled(): void {
    this.ownPending = undefined;
  }

  /**
   * The host described the terminal; `program` is what runs in its foreground; `scrollsThen`
   * is our count of scrolled rows at the instant the host described (see TerminalHost.terminals).
   */
  observed(state: TerminalState, program: string, scrollsThen?: number): void {
    this.ownState = state;
    if (scrollsThen !== undefined) this.marks.hostHad(scrollsThen, state.historySize);
    if (this.asking && !programMatches(this.asking.leader, program)) this.asking = undefined;
    this.setProgram(this.asking?.name ?? program);
  }

  /** wait() found that `name`, a later command of the pipeline led by `leader`, asks for input: name it while the host names that leader. */
  asks(leader: string, name: string): void {
    this.asking = { leader, name };
    this.setProgram(name);
  }

  private setProgram(program: string): void {
    if (program !== this.ownProgram) this.readingKeys = undefined;
    this.ownProgram = program;
  }

  /** The name the terminal was opened with, before the host has described it. */
  named(program: string): void {
    this.ownProgram = program;
  }

  /**
   * The host says the process ended but has no status yet: true while it is worth waiting
   * a little longer for the status (`graceMs` from the first time it said so).
   */
  awaitingExitStatus(now: number, graceMs: number): boolean {
    this.deadWithoutStatusSince ??= now;
    return now - this.deadWithoutStatusSince < graceMs;
  }

  /** The host said the process ended and its status is still on its way: the terminal is ending. */
  get ending(): boolean {
    return this.ownAlive && this.deadWithoutStatusSince !== undefined;
  }

  /**
   * The exit status the terminal's last process announced with the terminal's key: every byte
   * it printed before has arrived, so the terminal has ended even while its pane lingers.
   */
  get announcedExitStatus(): number | undefined {
    const announced = this.emulator.exitAnnouncement;
    return announced && this.statusKey !== undefined && announced.key === this.statusKey ? announced.status : undefined;
  }

  /** The terminal's process ended (status from the host, else its announcement). */
  died(exitCode: number | undefined): void {
    if (!this.ownAlive) return;
    this.ownAlive = false;
    this.ownExitCode = exitCode ?? this.announcedExitStatus;
    this.exitUnreported = true;
    this.ownFiles?.schedule();
    this.events.died.fire({ tty: this.number, ...(this.ownExitCode === undefined ? {} : { exitCode: this.ownExitCode }) });
    this.onActivity();
  }

  /**
   * The agent is being shown everything up to now by the reply `deliveryId` (undefined: the
   * caller has it already). The mark is taken from the emulator, at exactly the bytes shown,
   * in the host's numbering.
   */
  reported(deliveryId: string | undefined): void {
    this.tracker.markSeen(this.emulator);
    this.ownFiles?.anchorAt(this.tracker.markAbs);
    this.ownReportedEnds = this.ends;
    this.ownPending = undefined;
    this.sentSinceLook = [];
    this.openedSinceLook = false;
    this.exitUnreported = false;
    const history = this.marks.hostRow(this.emulator.totalScrolls);
    const cursorY = this.emulator.cursorAbs - this.emulator.totalScrolls;
    const digest = this.digest({ historySize: history, cursorX: this.emulator.cursorX, cursorY });
    this.marks.shown(deliveryId, { abs: this.emulator.cursorAbs, scrolls: this.emulator.totalScrolls, digest });
  }


  /** Does the host's terminal on `key` (pid and program) read single keys? undefined: not asked. */
  readsKeys(): boolean | undefined {
    return this.readingKeys?.key === this.readingKeysKey() ? this.readingKeys.value : undefined;
  }

  rememberReadsKeys(value: boolean | undefined): void {
    this.readingKeys = { key: this.readingKeysKey(), value };
  }

  /** The foreground program found by asking the process table, if asked for this pid within `maxAgeMs`. */
  cachedForeground(pid: number, now: number, maxAgeMs: number): string | undefined {
    return this.foreground && this.foreground.pid === pid && now - this.foreground.at < maxAgeMs ? this.foreground.name : undefined;
  }

  rememberForeground(pid: number, now: number, name: string): void {
    this.foreground = { pid, at: now, name };
  }

  snapshot(): TtySnapshot {
    return {
      screen: this.emulator.screenText(),
      screenAnsi: this.emulator.screenAnsi(),
      status: {
        tty: this.number,
        command: this.command,
        program: this.ownProgram,
        alive: this.ownAlive,
        ...(this.ownExitCode === undefined ? {} : { exitCode: this.ownExitCode }),
        lastActivity: new Date(this.ownLastActivity).toISOString(),
        highWaterMark: this.marks.mark.row,
        unseen: this.tracker.hasUnseen(this.emulator),
        cols: this.emulator.cols,
        rows: this.emulator.rows,
        fullScreen: this.emulator.alternateScreen,
      },
    };
  }

  /** A digest of what is on the screen and where the cursor is, to tell later whether anything changed. */
  digest(cursor: { historySize: number; cursorX: number; cursorY: number }): string {
    return createHash('sha256')
      .update(`${cursor.historySize}:${cursor.cursorX}:${cursor.cursorY}\n${this.emulator.screenText()}`)
      .digest('hex')
      .slice(0, 24);
  }

  /** A D mark whose prompt never ended with B (a PS1 we could not mark): count it after a short grace. */
  settleEnding(now: number, quietMs: number): void {
    if (this.endingAt && now - this.endingAt.at > 1000 && quietMs > 300) this.finishEnding();
  }

  private readingKeysKey(): string {
    return `${this.ownState?.pid}:${this.ownProgram}`;
  }

  private finishEnding(): void {
    if (!this.endingAt) return;
    this.ends += 1;
    this.ownLastEnd = this.endingAt;
    this.endingAt = undefined;
    this.events.commandFinished.fire({ tty: this.number, ...this.ownLastEnd });
  }

  /** Its shell signs its marks (one this server started): unsigned ones are forged. */
  signsMarks(): void {
    this.keyedMarks = true;
  }

  /** Whether unsigned marks are known to be forged (saved with the terminal's state). */
  get marksSigned(): boolean {
    return this.keyedMarks;
  }

  private onMark(mark: ShellMark): void {
    // Marks without the terminal's key are text the agent printed (a file, a web page), once its
    // shell signs them; a shell started before marks carried keys signs none.
    if (this.statusKey !== undefined) {
      if (mark.key === this.statusKey) this.keyedMarks = true;
      else if (this.keyedMarks || mark.key !== undefined) return;
    }
    // A foreground program found for one command says nothing about the next (a builtin like `read` runs in the shell).
    if (mark.kind === 'C' || mark.kind === 'D') {
      this.foreground = undefined;
      this.asking = undefined;
    }
    if (mark.kind === 'C') {
      this.commandStartedAt = mark.at;
      this.running = true;
      this.events.commandStarted.fire({ tty: this.number, at: mark.at, command: typedCommandLine(this.emulator, this.inputStart) });
    } else if (mark.kind === 'D') {
      const durationMs = this.commandStartedAt === undefined || !this.running ? undefined : mark.at - this.commandStartedAt;
      this.endingAt = {
        at: mark.at,
        ...(mark.exitCode === undefined ? {} : { exitCode: mark.exitCode }),
        ...(durationMs === undefined ? {} : { durationMs }),
      };
      this.running = false;
      this.commandStartedAt = undefined;
    } else if (mark.kind === 'B') {
      this.inputStart = { abs: this.emulator.cursorAbs, x: this.emulator.cursorX };
      this.finishEnding();
    }
    this.onActivity();
  }
}
