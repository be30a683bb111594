import type { EventLog } from './events/event-log.js';
import { RECORDING, Recording } from './recording.js';
import { type TickPlace, freshTickFile, pruneOldTicks } from './tick-files.js';

/** What the observer needs to know about a terminal when its recording starts. */
export interface ObservedTerminal {
  command: string;
  cols: number;
  rows: number;
  /** The screen as it is now (escape sequences), so that a recording started mid-session replays from a true picture. */
  screenAnsi: string;
}

export interface TerminalObserverOptions {
  recordingsDir: string;
  events: EventLog;
  /** The tick the work is in, or the last one when `between` (no tick runs). */
  tick: number;
  between?: boolean;
  /** Cap of one recording. */
  maxRecordingBytes: number;
  /** Cap of all recordings of the instance: the oldest files go first. */
  maxTotalBytes: number;
  /** Asked when a terminal's recording starts. */
  describe(tty: number): ObservedTerminal | undefined;
}

/**
 * Turns what the terminals do into recordings (one asciicast file per terminal per tick)
 * and events. Fed by plain calls from the terminal core; it never throws into it.
 */
export class TerminalObserver {
  private readonly recordings = new Map<number, Recording>();
  private place: Required<TickPlace>;
  private readonly commands = new Map<number, string>();
  /** Each terminal's latest recording file, also after its tick: a pointer names a file that exists. */
  private readonly written = new Map<number, string>();

  constructor(private readonly options: TerminalObserverOptions) {
    this.place = { tick: options.tick, between: options.between ?? false };
  }

  get events(): EventLog {
    return this.options.events;
  }

  currentTick(): number {
    return this.place.tick;
  }

  /** The tick events are stamped with: none between ticks (work outside a tick is not filed under the last one). */
  eventTick(): number | undefined {
    return this.place.between ? undefined : this.place.tick;
  }

  /** A new tick, or the time between two: every terminal starts a new recording at its next output. */
  setTick(tick: number, between = false): void {
    if (tick === this.place.tick && between === this.place.between) return;
    this.place = { tick, between };
    for (const recording of this.recordings.values()) void recording.close();
    this.recordings.clear();
    void pruneOldTicks(RECORDING, this.options.recordingsDir, this.options.maxTotalBytes, tick);
  }

  /**
   * The recording of a terminal (its path: the `wait` pointer names it): this tick's, else the
   * latest one written; undefined when none was. Never the name a file of this tick would have
   * before it has any output (that file may never be written).
   */
  recordingPath(tty: number): string | undefined {
    return this.recordings.get(tty)?.file ?? this.written.get(tty);
  }

  opened(tty: number, command: string): void {
    this.events.emit({ type: 'tty.opened', tty, command });
  }

  output(tty: number, data: Buffer): void {
    this.recording(tty).output(data);
  }

  commandStarted(tty: number, command: string): void {
    this.commands.set(tty, command);
    this.recording(tty).marker(`$ ${command}`);
    this.events.emit({ type: 'command.started', tty, command, recording: this.recordingPath(tty) });
  }

  commandFinished(tty: number, exitCode: number | undefined, durationMs: number | undefined): void {
    const command = this.commands.get(tty);
    this.commands.delete(tty);
    // The prompt after the first start-up has no command: no event for it.
    if (command === undefined) return;
    this.recording(tty).marker(`exit ${exitCode ?? '?'}${durationMs === undefined ? '' : ` after ${durationMs} ms`}`);
    this.events.emit({
      type: 'command.finished',
      tty,
      command,
      ...(exitCode === undefined ? {} : { exitCode }),
      ...(durationMs === undefined ? {} : { durationMs }),
      recording: this.recordingPath(tty),
    });
  }

  waitingForInput(tty: number, program: string): void {
    this.events.emit({ type: 'tty.waiting-for-input', tty, program });
  }

  died(tty: number, exitCode: number | undefined): void {
    this.recordings.get(tty)?.marker(`terminal ended${exitCode === undefined ? '' : ` with status ${exitCode}`}`);
    this.events.emit({ type: 'tty.died', tty, ...(exitCode === undefined ? {} : { exitCode }) });
  }

  closed(tty: number, archivedTo: string): void {
    void this.recordings.get(tty)?.close();
    this.recordings.delete(tty);
    this.commands.delete(tty);
    this.events.emit({ type: 'tty.closed', tty, archivedTo });
  }

  async close(): Promise<void> {
    await Promise.all([...this.recordings.values()].map((r) => r.close()));
    await this.events.flush();
  }

  private recording(tty: number): Recording {
    let recording = this.recordings.get(tty);
    if (!recording) {
      const terminal = this.options.describe(tty) ?? { command: '?', cols: 120, rows: 40, screenAnsi: '' };
      const { cols, rows } = terminal;
      const title = `TTY ${tty}: ${terminal.command} (${this.place.between ? `between ticks, after tick ${this.place.tick}` : `tick ${this.place.tick}`})`;
      // A terminal number can be closed and opened again in a tick: a new file, not the old one.
      recording = new Recording(freshTickFile(RECORDING, this.options.recordingsDir, tty, this.place.tick, this.place.between), { cols, rows, title }, this.options.maxRecordingBytes);
      // Start from what the screen shows (a terminal adopted after a restart, a new tick): clear, home, then the screen.
      if (terminal.screenAnsi) recording.output(`\x1b[H\x1b[2J${terminal.screenAnsi}`);
      this.recordings.set(tty, recording);
      this.written.set(tty, recording.file);
    }
    return recording;
  }
}
