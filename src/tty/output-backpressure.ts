import type { TerminalHost } from './host/terminal-host.js';
import type { Tty } from './terminal/tty.js';

/** Bytes one emulator has not parsed yet above which the host stops reading output. */
const HIGH_BYTES = 2 * 1024 * 1024;
/** Reading goes on once every emulator is below this. */
const LOW_BYTES = 256 * 1024;
const CHECK_MS = 10;

/**
 * Output can come faster than the emulators parse it: a flood while the agent's own build
 * takes the CPU. Unbounded, the backlog grows the server's memory until xterm refuses writes
 * (at 50 MB), and every type and wait waits for all of it. Bounded, tmux stops reading the
 * pane and the program waits on its terminal, as behind a slow real one; C-c still goes out.
 */
export class OutputBackpressure {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly host: TerminalHost,
    private readonly ttys: () => readonly Tty[],
  ) {}

  /** After output reached a terminal. */
  check(): void {
    if (this.timer || !this.ttys().some((t) => t.emulator.backlog >= HIGH_BYTES)) return;
    this.host.throttle(true);
    this.timer = setInterval(() => {
      if (!this.ttys().some((t) => t.emulator.backlog > LOW_BYTES)) this.release();
    }, CHECK_MS);
  }

  /** Read again (the manager lets go: its last sync must get tmux's answer). */
  release(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.host.throttle(false);
  }
}
