import { createHash } from 'node:crypto';
import type { SentInput } from '../../observe/echo.js';
import type { TtyFiles, TtySnapshot } from '../../observe/tty-files.js';
import { UnseenTracker } from '../seen/unseen-tracker.js';
import { isShell, programMatches } from '../probe/program-name.js';
import { SeenMarks } from '../seen/seen-marks.js';
import type { TerminalState } from '../host/terminal-host.js';
import type { TtyEventSource } from '../api/tty-events.js';
import { type ShellMark, TtyEmulator } from '../screen/tty-emulator.js';
import { AgentActions, type PendingAction } from './agent-actions.js';
import { Liveness } from './liveness.js';
import { ShellCommands } from './shell-commands.js';
import type { UntilPattern } from './until.js';

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
 * methods, each named for what happened. State that changes together is a part of its own:
 * the shell's commands, the agent's actions, the process's liveness (others read the parts
 * read-only and call their methods for what happened to that part alone).
 */
export class Tty {
  readonly number: number;
  readonly command: string;
  readonly id: string;
  readonly openedAt: string;
  readonly statusKey: string | undefined;
  readonly emulator: TtyEmulator;
  readonly tracker: UnseenTracker;
  /** What the agent has seen, reply by reply, in the host's numbering when saved. */
  readonly marks = new SeenMarks();
  /** The commands its shell ran, as its marks tell them. */
  readonly commands: Readonly<ShellCommands>;
  /** What the agent did here: its last action, what it typed since it last looked. */
  readonly actions: Readonly<AgentActions> = new AgentActions();
  private readonly life = new Liveness();
  /** Set at open for a program the kernel cannot judge: a wait on this terminal ends when it matches. */
  until: UntilPattern | undefined;
  private ownFiles: TtyFiles | undefined;
  private ownState: TerminalState | undefined;
  private ownProgram = '';
  /** The terminal's shell, as the host last named it in the foreground. */
  private shell: string | undefined;
  private ownLastActivity = Date.now();
  /** The program that asks for input, while the host names the first command of its pipeline (`seq 1000000 | less`). */
  private asking: { leader: string; name: string } | undefined;
  private readingKeys: { key: string; value: boolean | undefined } | undefined;
  private foreground: { pid: number; at: number; name: string } | undefined;
  /** Background processes wait last named under this idle shell ("sleep (pid 42, 1 MB)"). */
  private ownBackground: readonly string[] = [];
  /** waitingForInput was fired since the last output or action. */
  private waitingAnnounced = false;

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
    this.commands = new ShellCommands(identity.number, identity.statusKey, events);
    this.tracker = new UnseenTracker(markAbs, 0, () => this.actions.typedLines);
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
    return this.life.alive;
  }
  get exitCode(): number | undefined {
    return this.life.exitCode;
  }
  /** The host said the process ended and its status is still on its way: the terminal is ending. */
  get ending(): boolean {
    return this.life.ending;
  }
  /** The host's latest description of the terminal. */
  get state(): TerminalState | undefined {
    return this.ownState;
  }
  get lastActivity(): number {
    return this.ownLastActivity;
  }
  get background(): readonly string[] {
    return this.ownBackground;
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
    return this.tracker.hasUnseen(this.emulator) || (!this.life.alive && this.life.unreported) || this.marks.gone !== undefined;
  }

  /** The agent opened it (`integrated`: the kernel's bash) or typed `sent` into it. */
  acted(kind: PendingAction['kind'], integrated = false, sent?: SentInput): void {
    const now = Date.now();
    this.actions.acted(kind, now, this.commands.ends, integrated, sent);
    this.readingKeys = undefined;
    this.ownLastActivity = now;
    this.waitingAnnounced = false;
  }

  /** wait() judged it idle, waiting for keys: tell listeners once per quiet spell. */
  waitingForInput(): void {
    if (this.waitingAnnounced) return;
    this.waitingAnnounced = true;
    this.events.waitingForInput.fire({ tty: this.number, program: this.ownProgram });
  }

  /** What runs in the background under the idle shell now (none: its jobs ended). */
  runsInBackground(names: readonly string[]): void {
    this.ownBackground = names;
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
    if (isShell(program)) this.shell = program;
    if (program === this.ownProgram) return;
    this.readingKeys = undefined;
    this.ownProgram = program;
    // The status file (agent-kernel ls, the web view) says what runs now, not at the last output.
    this.ownFiles?.schedule();
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
    return this.life.awaitingExitStatus(now, graceMs);
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
    if (!this.life.died(exitCode ?? this.announcedExitStatus)) return;
    this.ownFiles?.schedule();
    this.events.died.fire({ tty: this.number, ...(this.life.exitCode === undefined ? {} : { exitCode: this.life.exitCode }) });
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
    this.commands.reported();
    this.actions.looked();
    this.life.reported();
    const history = this.marks.hostRow(this.emulator.totalScrolls);
    const cursorY = this.emulator.cursorAbs - this.emulator.totalScrolls;
    const digest = this.digest({ historySize: history, cursorX: this.emulator.cursorX, cursorY });
    this.marks.shown(deliveryId, { abs: this.emulator.cursorAbs, scrolls: this.emulator.totalScrolls, digest });
    this.ownFiles?.schedule();
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
        alive: this.life.alive,
        ...(this.commands.signed || this.commands.ends > 0 || this.commands.running ? { commandRunning: this.commands.running } : {}),
        ...(this.life.exitCode === undefined ? {} : { exitCode: this.life.exitCode }),
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

  private readingKeysKey(): string {
    return `${this.ownState?.pid}:${this.ownProgram}`;
  }

  private onMark(mark: ShellMark): void {
    if (!this.commands.accepts(mark)) return;
    // A foreground program found for one command says nothing about the next (a builtin like `read` runs in the shell).
    if (mark.kind === 'C' || mark.kind === 'D') {
      this.foreground = undefined;
      this.asking = undefined;
    }
    this.commands.marked(mark, this.emulator);
    // The command finished: its shell is in the foreground again, whether or not anyone asks the host (between ticks nobody does).
    if (mark.kind === 'D' && this.shell) this.setProgram(this.shell);
    this.ownFiles?.schedule();
    this.onActivity();
  }
}
