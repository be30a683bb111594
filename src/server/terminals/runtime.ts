import { describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { terminalsShuttingDown } from '../../tty/api/tty-errors.js';
import { SerialQueue } from '../../util/serial-queue.js';
import { AgentRole } from './agent-role.js';
import type { Terminals } from './terminals.js';

/**
 * The terminals of one instance, started lazily and shared by every MCP session of the
 * server. Start-up (engine, image, container, re-adoption) runs in the background from
 * `warmUp()`, so the MCP handshake answers at once; `login` awaits it. A start that fails
 * is forgotten, so a later `login` tries again (an engine that was down may be back).
 */
export class TerminalsRuntime {
  private starting: Promise<Terminals> | undefined;
  private ready: Terminals | undefined;
  private disposed = false;
  private readonly queue = new SerialQueue();
  /** Why the last start-up failed, until one succeeds. */
  private failure: string | undefined;
  constructor(
    private readonly startTerminals: () => Promise<Terminals>,
    private readonly logger: Logger,
    /** Which session's waits mark output seen; the others observe. */
    readonly agentRole = new AgentRole(),
  ) {}

  /** Begin starting now; errors are logged here and reported by the next `terminals()`. */
  warmUp(): void {
    this.terminals().catch(() => {
      // Already logged in terminals(); login reports it to the client.
    });
  }

  /** The started terminals, if start-up has finished. */
  get current(): Terminals | undefined {
    return this.ready;
  }

  /** Where start-up stands, for the kernel's health: starting (or not begun), ready, or the error it failed with. */
  get startState(): { state: 'starting' | 'ready' | 'error'; error?: string } {
    if (this.ready) return { state: 'ready' };
    if (this.failure !== undefined && !this.starting) return { state: 'error', error: this.failure };
    return { state: 'starting' };
  }

  terminals(): Promise<Terminals> {
    if (this.disposed) return Promise.reject(terminalsShuttingDown());
    if (this.ready) return Promise.resolve(this.ready);
    if (!this.starting) {
      const began = Date.now();
      this.logger.info('starting the sandbox and terminals');
      this.starting = this.startTerminals().then(
        (terminals) => {
          this.ready = terminals;
          this.failure = undefined;
          this.logger.info(
            { ms: Date.now() - began, adopted: terminals.adoptReport.adopted, lost: terminals.adoptReport.lost.map((t) => t.tty) },
            'terminals ready',
          );
          return terminals;
        },
        (error: unknown) => {
          this.starting = undefined;
          this.failure = describeError(error);
          this.logger.error({ err: error, ms: Date.now() - began }, `start-up failed: ${describeError(error)}`);
          throw error;
        },
      );
    }
    return this.starting;
  }

  /**
   * Forget terminals that stopped working (tmux or the container went away under them):
   * the next call starts afresh and re-adopts whatever survived.
   */
  async invalidate(broken: Terminals): Promise<void> {
    if (this.ready !== broken) return;
    this.ready = undefined;
    this.starting = undefined;
    this.logger.warn('the terminals stopped working; the next call starts them again');
    await broken.dispose().catch((error: unknown) => this.logger.warn({ err: error }, 'disposing the broken terminals failed'));
  }

  /** Run `task` after every task queued before it (logins of several sessions must not open the same TTY twice). */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.queue.run(task);
  }

  /** Detach from the terminals (they go on in tmux) and release the lock. Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const terminals = this.ready ?? (await this.starting?.catch(() => undefined));
    if (terminals) {
      await terminals.dispose();
      this.logger.info('terminals detached; they live on in tmux');
    }
  }
}
