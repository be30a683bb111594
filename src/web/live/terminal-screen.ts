import { isCodedError } from '../../errors.js';
import { isNoKernel } from '../../kernel/client/link.js';
import { followScreen } from '../../kernel/client/terminal-client.js';
import { SCREEN_HISTORY_MAX } from '../../kernel/protocol.js';
import { sleep } from '../../util/sleep.js';

/** Lines of history a page gets for the terminal it shows large (search, scrolling back): what the kernel holds. */
export const FOCUS_HISTORY = SCREEN_HISTORY_MAX;
/** How soon a screen is asked for again after its stream ended (the kernel restarting, a terminal reopened). */
const AGAIN_MS = 1000;

export interface ScreenListener {
  /** A whole screen: the page draws it on a reset terminal of that size. */
  screen(screen: { cols: number; rows: number; data: string }): void;
  /** What the terminal printed after that screen, in order. */
  output(data: string): void;
}

/** What a page shows where no kernel answers: there is no screen to show, and the page says why and what to do. */
export function noKernelScreen(instance: string): { cols: number; rows: number; data: string } {
  const lines = [`No kernel runs for ${instance}: nothing reads its terminals now.`, `kernel-runner watch ${instance} starts it; Recordings has what they showed.`];
  return { cols: 80, rows: 4, data: `\x1b[2m${lines.join('\r\n')}\x1b[0m` };
}

/**
 * One terminal as one page shows it: the screen from the instance's kernel (its own emulator,
 * none here), then what the terminal prints. When the stream ends (the terminal was resized or
 * reopened, the kernel restarted, the page fell behind) or `resync()` is called, a fresh screen
 * is asked for, until `stop()`.
 */
export class TerminalScreen {
  private readonly stopped = new AbortController();
  private round: AbortController | undefined;

  constructor(
    private readonly where: { instance: string; socketPath: string; tty: number },
    private readonly history: boolean,
    private readonly listener: ScreenListener,
  ) {
    void this.run();
  }

  /** Start again from a fresh screen (what was queued for the page is dropped by the caller). */
  resync(): void {
    this.round?.abort();
  }

  stop(): void {
    this.stopped.abort();
    this.round?.abort();
  }

  private async run(): Promise<void> {
    const { instance, socketPath, tty } = this.where;
    let shownNoKernel = false;
    while (!this.stopped.signal.aborted) {
      this.round = new AbortController();
      const signal = AbortSignal.any([this.round.signal, this.stopped.signal]);
      let pause = AGAIN_MS;
      try {
        await followScreen(socketPath, tty, { history: this.history ? FOCUS_HISTORY : 0, signal }, {
          screen: (s) => {
            shownNoKernel = false;
            this.listener.screen({ cols: s.cols, rows: s.rows, data: s.ansi });
          },
          output: (data) => this.listener.output(data),
        });
        // Ended by the kernel: a fresh screen at once (a moment's pause, should it end again and again).
        pause = 100;
      } catch (error) {
        if (isNoKernel(error) && !shownNoKernel) {
          shownNoKernel = true;
          this.listener.screen(noKernelScreen(instance));
        }
        // A resync's abort asks again at once; anything else (starting, closed terminal) in a moment.
        if (this.round.signal.aborted && !isCodedError(error)) pause = 0;
      }
      if (pause > 0) await sleep(pause, this.stopped.signal);
    }
  }
}
