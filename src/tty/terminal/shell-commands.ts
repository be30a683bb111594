import type { TtyEventSource } from '../api/tty-events.js';
import { typedCommandLine } from '../screen/command-line.js';
import { parseShellTitle } from '../screen/shell-integration.js';
import type { ShellMark, TtyEmulator } from '../screen/tty-emulator.js';

export interface CommandEnd {
  exitCode?: number;
  durationMs?: number;
  at: number;
}

/**
 * The commands a terminal's shell ran, as its marks (OSC 133) tell them: whether one runs and
 * since when, how many finished and how the last one ended, how many of those the agent was
 * told of. A D mark (command finished) counts once the prompt after it is drawn (mark B).
 * Its fields change only through its methods: a Tty shows it to others as Readonly.
 */
export class ShellCommands {
  /** Its shell signs its marks with the key: unsigned ones are forged from now on (saved with the terminal's state). */
  signed = false;
  running = false;
  /** Command-finished marks (OSC 133 D) so far. */
  ends = 0;
  lastEnd: CommandEnd | undefined;
  /** The command end reported to the agent last, so an exit code is told once. */
  reportedEnds = 0;
  private startedAt: number | undefined;
  /** Where the command line starts: the end of the prompt (mark B). */
  private inputStart: { abs: number; x: number } | undefined;
  /** The last D mark, waiting for the prompt to be drawn (mark B) before it counts. */
  private endingAt: CommandEnd | undefined;

  constructor(
    private readonly tty: number,
    /** The key the terminal's marks are signed with (none: a terminal from before keys). */
    private readonly statusKey: string | undefined,
    private readonly events: TtyEventSource,
  ) {}

  /** When the command its shell runs began (saved, so that a later server reports its end and exit status). */
  get runningSince(): number | undefined {
    return this.running ? this.startedAt : undefined;
  }

  /** Its shell signs its marks (one this server started): unsigned ones are forged. */
  signs(): void {
    this.signed = true;
  }

  /**
   * Is `mark` its shell's own? Marks without the terminal's key are text the agent printed (a
   * file, a web page), once its shell signs them; a shell started before marks carried keys signs none.
   */
  accepts(mark: ShellMark): boolean {
    if (this.statusKey === undefined) return true;
    if (mark.key === this.statusKey) this.signed = true;
    else if (this.signed || mark.key !== undefined) return false;
    return true;
  }

  /** Its shell's mark (accepted) arrived; `emulator` has drawn everything before it. */
  marked(mark: ShellMark, emulator: TtyEmulator): void {
    if (mark.kind === 'C') {
      this.startedAt = mark.at;
      this.running = true;
      this.events.commandStarted.fire({ tty: this.tty, at: mark.at, command: typedCommandLine(emulator, this.inputStart) });
    } else if (mark.kind === 'D') {
      const durationMs = this.startedAt === undefined || !this.running ? undefined : mark.at - this.startedAt;
      this.endingAt = {
        at: mark.at,
        ...(mark.exitCode === undefined ? {} : { exitCode: mark.exitCode }),
        ...(durationMs === undefined ? {} : { durationMs }),
      };
      this.running = false;
      this.startedAt = undefined;
    } else if (mark.kind === 'B') {
      this.inputStart = { abs: emulator.cursorAbs, x: emulator.cursorX };
      if (this.running && !this.endingAt) this.endedBeforePrompt(mark);
      this.finishEnding();
    }
  }

  /** Taken over idle at its prompt: the next command line starts at the cursor (this server saw no prompt mark yet). */
  adoptedAtPrompt(emulator: TtyEmulator): void {
    if (!this.running && !emulator.alternateScreen) this.inputStart ??= { abs: emulator.cursorAbs, x: emulator.cursorX };
  }

  /** A command an earlier server saw start runs on. */
  resume(startedAt: number): void {
    this.running = true;
    this.startedAt = startedAt;
  }

  /** A command an earlier server saw start ended while no server read the terminal (its shell's title tells how). */
  endedUnseen(startedAt: number, end: { exitCode: number; endedAt: number }): void {
    this.endingAt = { at: end.endedAt, exitCode: end.exitCode, durationMs: Math.max(0, end.endedAt - startedAt) };
    this.finishEnding();
  }

  /**
   * A prompt drawn while a command runs, with no D mark before it: the command ended and its D
   * mark went where no mark is read (the history a server captured when it adopted the terminal
   * in the instant between the D and this prompt). The title the prompt set just before tells how.
   */
  private endedBeforePrompt(mark: ShellMark): void {
    const end = parseShellTitle(mark.title ?? '', this.statusKey);
    if (!end || this.startedAt === undefined) return;
    this.endingAt = { at: mark.at, exitCode: end.exitCode, durationMs: Math.max(0, end.endedAt - this.startedAt) };
    this.running = false;
    this.startedAt = undefined;
  }

  /** A D mark whose prompt never ended with B (a PS1 we could not mark): count it after a short grace. */
  settleEnding(now: number, quietMs: number): void {
    if (this.endingAt && now - this.endingAt.at > 1000 && quietMs > 300) this.finishEnding();
  }

  /** The agent was shown every command end so far. */
  reported(): void {
    this.reportedEnds = this.ends;
  }

  private finishEnding(): void {
    if (!this.endingAt) return;
    this.ends += 1;
    this.lastEnd = this.endingAt;
    this.endingAt = undefined;
    this.events.commandFinished.fire({ tty: this.tty, ...this.lastEnd });
  }
}
