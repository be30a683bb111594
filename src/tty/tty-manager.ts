import type { Instance } from '../config/instance.js';
import { CodedError, describeError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { SerialQueue } from '../util/serial-queue.js';
import { adoptAll } from './lifecycle/adoption.js';
import { startTerminalHost } from './host/choose-host.js';
import { ForegroundProbe } from './probe/foreground-probe.js';
import { InputWatch } from './terminal/input-watch.js';
import { LiveTtys } from './terminal/live-ttys.js';
import { type OpenOptions, capacity, closeTty, openTty } from './lifecycle/open-close.js';
import { OutputBackpressure } from './output-backpressure.js';
import { Persistence } from './lifecycle/persistence.js';
import { type InstanceLock, acquireInstanceLock } from './instance-lock.js';
import { bashRcfilePath, writeBashRcfile } from './screen/shell-integration.js';
import { syncAll } from './terminal/terminal-sync.js';
import type { TerminalHost } from './host/terminal-host.js';
import type { Tty } from './terminal/tty.js';
import type { TtyContext } from './terminal/tty-context.js';
import { terminalsShuttingDown } from './api/tty-errors.js';
import { type Disposable, TtyEventSource, type TtyEvents } from './api/tty-events.js';
import { typeText } from './type/type-text.js';
import { compileUntil } from './terminal/until.js';
import type { AdoptReport, CloseResult, OpenResult, ScreenSnapshot, TtyInfo, TypeInput, TypeResult, WaitOptions, WaitResult } from './api/types.js';
import { Activity, waitUntilDone } from './wait/wait-loop.js';
import { reportChanges } from './wait/wait-report.js';

export type { OpenOptions } from './lifecycle/open-close.js';

export interface TtyManagerStartOptions {
  instance: Instance;
  sandbox: Sandbox;
  logger: Logger;
  /** The tick number, for archive names (`tty_N-tick-NNN`). */
  tick?: number;
  /** false: on the host backend, PTYs even where tmux is installed (see choose-host.ts). */
  hostTmux?: boolean;
  /** The instance lock, taken by the caller (who keeps it past dispose); absent: taken here and released at dispose. */
  lock?: InstanceLock;
}

/**
 * The agent's terminals on one instance. A TerminalHost holds their processes: one tmux
 * server in the sandbox (so they outlive this process), or, on the host backend without
 * tmux, PTYs of this process. Each terminal's bytes feed one headless emulator; what the
 * agent has seen is tracked per terminal and persisted. Safe for concurrent calls: open,
 * type and close run one at a time; wait may run beside them.
 *
 * The parts: choose-host (which host), adoption (re-attach at start), open-close and
 * type-text (the commands), wait-loop, wait-judge and wait-report (wait), terminal-sync
 * (the host's view of each terminal), persistence (seen state, registry), tty-events.
 */
export class TtyManager {
  adoptReport: AdoptReport = { adopted: [], lost: [], persistent: true };
  private readonly activity = new Activity();
  private readonly ctx: TtyContext;
  private readonly persistence: Persistence;
  private readonly backpressure: OutputBackpressure;
  private readonly eventSource: TtyEventSource;
  private readonly serial = new SerialQueue();
  private isDisposed = false;
  private hostGone: string | undefined;
  private tick: number;
  private readonly probe: ForegroundProbe;

  private constructor(
    parts: { instance: Instance; sandbox: Sandbox; logger: Logger; host: TerminalHost; rcfile: string; tick: number },
    private readonly lock: InstanceLock | undefined,
  ) {
    const { instance, logger } = parts;
    this.tick = parts.tick;
    this.probe = new ForegroundProbe(parts.sandbox, logger);
    this.eventSource = new TtyEventSource((error) => logger.warn({ error: describeError(error) }, 'a terminal event listener failed'));
    this.ctx = {
      instance,
      sandbox: parts.sandbox,
      host: parts.host,
      logger,
      config: instance.config.tty,
      paths: instance.paths,
      ttys: new LiveTtys(),
      events: this.eventSource,
      rcfile: parts.rcfile,
      inputWatch: new InputWatch(this.probe),
      tick: () => this.tick,
      wake: () => this.activity.wake(),
    };
    this.persistence = new Persistence(this.ctx);
    this.backpressure = new OutputBackpressure(this.ctx.host, () => this.ctx.ttys.all());
  }

  /** Take the instance's lock, start or find tmux (or PTYs: see choose-host.ts), and re-adopt the terminals that are still alive. */
  static async start(options: TtyManagerStartOptions): Promise<TtyManager> {
    const { instance, sandbox } = options;
    const logger = options.logger.child({ component: 'tty' });
    const lock = options.lock ? undefined : await acquireInstanceLock(instance.paths.instanceLock);
    let manager: TtyManager | undefined;
    try {
      // Written host-private; a container reads it through the read-only mount at <data>/tmp/kernel.
      const written = await writeBashRcfile(instance.paths.shell);
      const rcfile = sandbox.kind === 'host' ? written : bashRcfilePath(instance.paths.shownShell);
      // A remote engine mounts nothing of this machine: the shell folder is copied in.
      await sandbox.showHostFolder?.(instance.paths.shell, instance.paths.shownShell);
      const host = await startTerminalHost({ instance, sandbox, logger, ...(options.hostTmux === undefined ? {} : { hostTmux: options.hostTmux }) });
      manager = new TtyManager({ instance, sandbox, logger, host, rcfile, tick: options.tick ?? 0 }, lock);
      await manager.init();
      return manager;
    } catch (error) {
      if (manager) await manager.dispose().catch(() => {});
      else await lock?.release();
      throw error;
    }
  }

  /** Subscribe to what happens on the terminals (output, commands, open, close, exit, waiting for input). */
  get events(): TtyEvents {
    return this.eventSource;
  }

  /** True once dispose() was called. */
  get disposed(): boolean {
    return this.isDisposed;
  }

  /** Why the terminal host ended under us (tmux or the container went away), if it did. */
  get broken(): string | undefined {
    return this.hostGone;
  }

  setTick(tick: number): void {
    this.tick = tick;
  }

  private async init(): Promise<void> {
    const { host, logger, ttys } = this.ctx;
    host.on('output', (id, data) => {
      if (ttys.route(id, data)) this.persistence.schedule();
      this.backpressure.check();
    });
    host.on('gone', (reason) => {
      if (this.isDisposed) return;
      this.hostGone = reason;
      logger.error({ reason }, 'the terminal host ended');
      this.activity.wake();
    });
    this.adoptReport = await adoptAll(this.ctx);
    // Two files, each fsynced: one after the other they held up login by two syncs.
    await Promise.all([this.persistence.saveState(), this.persistence.writeRegistry()]);
    const { adopted, lost } = this.adoptReport;
    logger.info({ adopted, lost: lost.map((l) => l.tty), host: host.description, sandbox: this.ctx.sandbox.description }, 'terminals ready');
  }

  /**
   * Open a terminal: the integrated bash, or `command`; on the lowest free number, or on
   * `tty`; in `cwd` (inside the sandbox; relative to the data directory, which is the default).
   */
  open(options: OpenOptions = {}): Promise<OpenResult> {
    return this.serialized(() => openTty(this.ctx, this.persistence, options));
  }

  /** Send text or a key to a terminal, after checking that the agent has seen everything and knows what runs there. */
  type(input: TypeInput): Promise<TypeResult> {
    return this.serialized(() => typeText(this.ctx, input));
  }

  /** End a terminal's processes and archive its scrollback. */
  close(number: number): Promise<CloseResult> {
    return this.serialized(async () => {
      const { archivedTo, ended } = await closeTty(this.ctx, this.persistence, this.ctx.ttys.get(number, this.ctx.config.max_ttys));
      return { tty: number, archivedTo, ended, capacity: capacity(this.ctx) };
    });
  }

  /** Resize one terminal (the program gets SIGWINCH). */
  resize(number: number, cols: number, rows: number): Promise<TtyInfo> {
    return this.serialized(async () => {
      const tty = this.ctx.ttys.get(number, this.ctx.config.max_ttys);
      if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 20 || cols > 500 || rows < 5 || rows > 200) {
        throw new CodedError('USAGE', `A terminal is 20-500 columns by 5-200 rows; got ${cols}x${rows}.`, { details: { cols, rows } });
      }
      await this.ctx.host.resize(tty.id, number, cols, rows);
      await syncAll(this.ctx);
      tty.emulator.resize(cols, rows);
      await this.persistence.saveState();
      return info(tty);
    });
  }

  /**
   * Wait until what the agent started is done (or the timeout), then report what changed on
   * every terminal since the agent last looked, and mark it seen. An aborted wait reports
   * nothing and marks nothing; so does a wait that `observe`s, which changes no state at all.
   */
  async wait(options: WaitOptions): Promise<WaitResult> {
    this.assertUsable();
    const { signal, deliveryId, until, observe = false } = options;
    const waitUntil = until && { tty: this.ctx.ttys.get(until.tty, this.ctx.config.max_ttys), pattern: compileUntil(until) };
    const hostGone = () => this.hostGone !== undefined;
    const { started, ...judgement } = await waitUntilDone(this.ctx, this.activity, { timeoutMs: options.timeoutMs, hostGone, signal, until: waitUntil });
    signal?.throwIfAborted();
    return this.serialized(() => reportChanges(this.ctx, this.persistence, judgement, started, { signal, deliveryId, observe }));
  }

  /**
   * The reply of the wait called with `deliveryId` was handed to the client (written to
   * the pipe or socket): what it showed is seen for good. Until then, a restart shows it
   * again, labelled "possibly repeated": never lost, never silently repeated.
   */
  delivered(deliveryId: string): void {
    let any = false;
    for (const tty of this.ctx.ttys.all()) any = tty.marks.reached(deliveryId) || any;
    if (any) this.persistence.saveState().catch((error: unknown) => this.ctx.logger.warn({ error: describeError(error) }, 'saving terminal state failed'));
  }

  /** Elision notes name each terminal's recording (`where` gives its host path; the agent is told its path in the container). */
  pointRecordings(where: (tty: number) => string | undefined): void {
    this.ctx.recordingOf = where;
  }

  /** A terminal's screen as escape sequences, and its size (an observer starting a recording mid-session). */
  screenOf(number: number): { ansi: string; cols: number; rows: number } | undefined {
    const tty = this.ctx.ttys.all().find((t) => t.number === number);
    return tty && { ansi: tty.emulator.screenAnsi(), cols: tty.emulator.cols, rows: tty.emulator.rows };
  }

  /**
   * A terminal's screen as escape sequences (with up to `history` lines above it) and, from that
   * very instant, every byte it prints, to `onOutput`: the screen plus what follows is exactly what
   * this emulator shows, so no other emulator replays the terminal. `ended` is called once when
   * that stops holding (the terminal closed or was resized, the terminals were let go) and
   * after `stop()`.
   */
  async watchScreen(number: number, history: number, onOutput: (data: Buffer) => void, ended: (why: string) => void): Promise<{ screen: ScreenSnapshot; stop(): void }> {
    this.assertUsable();
    const tty = this.ctx.ttys.get(number, this.ctx.config.max_ttys);
    const { emulator } = tty;
    let done = false;
    const subscriptions: Disposable[] = [];
    const finish = (why: string) => {
      if (done) return;
      done = true;
      for (const subscription of subscriptions) subscription.dispose();
      ended(why);
    };
    const stillShown = (): string | undefined => {
      if (this.isDisposed) return 'the terminals were let go';
      if (!this.ctx.ttys.has(number) || this.ctx.ttys.get(number, this.ctx.config.max_ttys) !== tty) return 'the terminal closed';
      return undefined;
    };
    const size = { cols: emulator.cols, rows: emulator.rows };
    // Subscribed and checkpointed in one step: bytes fired after it are parsed after the snapshot.
    subscriptions.push(
      this.eventSource.onOutput((event) => {
        if (event.tty !== number || done) return;
        const gone = stillShown();
        if (gone) return finish(gone);
        if (emulator.cols !== size.cols || emulator.rows !== size.rows) return finish('the terminal was resized');
        onOutput(event.data);
      }),
      this.eventSource.onClosed((event) => {
        if (event.tty === number) finish('the terminal closed');
      }),
    );
    const screen = await emulator.checkpoint(() => ({ cols: emulator.cols, rows: emulator.rows, ansi: emulator.screenAnsi(history) }));
    if (screen.cols !== size.cols || screen.rows !== size.rows) finish('the terminal was resized');
    return { screen, stop: () => finish('stopped') };
  }

  /**
   * Keys a person typed (the web view started with --write), byte for byte, in turn with the
   * agent's calls. No check of what the agent has seen: the agent is told at its next wait.
   */
  typeAsPerson(number: number, data: Buffer): Promise<number> {
    return this.serialized(async () => {
      const tty = this.ctx.ttys.get(number, this.ctx.config.max_ttys);
      if (!tty.alive) throw new CodedError('TTY_NOT_FOUND', `TTY ${number}'s program has exited: nothing takes keys there now.`, { details: { tty: number } });
      await this.ctx.host.sendBytes(tty.id, data);
      this.ctx.logger.info({ tty: number, bytes: data.length }, 'a person typed');
      return data.length;
    });
  }

  list(): TtyInfo[] {
    return this.ctx.ttys.all().map(info);
  }

  hasUnseen(): boolean {
    return this.ctx.ttys.all().some((t) => t.hasUnseen());
  }

  /** A line for people and for login: which terminals have output the agent has not seen. */
  unseenSummary(): string {
    const unseen = this.ctx.ttys
      .all()
      .filter((t) => t.hasUnseen())
      .map((t) => t.number);
    if (unseen.length === 0) return 'No terminal has unseen output.';
    return `${unseen.length === 1 ? `TTY ${unseen[0]} has` : `TTYs ${unseen.join(', ')} have`} output not seen yet: call wait().`;
  }

  /** Detach and release the lock (if it was taken here). The terminals live on in tmux (PTYs end here). */
  async dispose(): Promise<void> {
    if (this.isDisposed) return;
    this.isDisposed = true;
    this.persistence.stop();
    this.backpressure.release();
    await this.serial.idle();
    const ttys = this.ctx.ttys.all();
    if (!this.ctx.host.closed) {
      await syncAll(this.ctx).catch(() => []);
      for (const tty of ttys) tty.emulator.flushRowsAbove();
      await Promise.all(ttys.map((t) => t.files.close()));
      await this.persistence.saveState().catch(() => {});
      this.ctx.host.detach();
    }
    for (const tty of ttys) tty.emulator.dispose();
    this.probe.close();
    await this.lock?.release();
  }

  private assertUsable(): void {
    if (this.isDisposed) throw terminalsShuttingDown();
    if (this.hostGone) {
      throw new CodedError('TMUX_FAILED', `The terminals' tmux went away (${this.hostGone}): the container stopped or restarted. The next call starts the terminals again.`, {
        details: { gone: this.hostGone },
      });
    }
  }

  /** One at a time, each after the host is known usable. */
  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    return this.serial.run(() => {
      this.assertUsable();
      return fn();
    });
  }
}

function info(tty: Tty): TtyInfo {
  const unseenLines = tty.hasUnseen() ? tty.tracker.collect(tty.emulator).total : 0;
  return {
    tty: tty.number,
    command: tty.command,
    program: tty.program,
    alive: tty.alive,
    ...(tty.exitCode === undefined ? {} : { exitCode: tty.exitCode }),
    unseenLines,
    lastActivity: new Date(tty.lastActivity).toISOString(),
    cols: tty.emulator.cols,
    rows: tty.emulator.rows,
  };
}
