import { type ChildProcess, spawn } from 'node:child_process';
import { appendEvent } from '../../observe/events/event-log.js';
import type { Instance } from '../../config/instance.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { bundleIdentity } from '../build.js';
import { kernelHealth, kernelRequest } from '../client/link.js';
import type { KernelHealth } from '../protocol.js';
import { kernelSocketPath } from '../socket-path.js';
import { isProcessAlive } from '../../util/process/pid-lock.js';
import { sleep } from '../../util/sleep.js';
import { packageFiles } from '../../config/package-files.js';
import { processStartTime, signalGroup } from '../../util/process/process-group.js';
import { serverEnv } from '../../config/server-env.js';

/**
 * watch's supervision of the instance's kernel (seed 003's lifecycle): start `agent-kernel
 * kernel`, wait for its READY line, check its heartbeat (GET /v1/health) every few seconds,
 * restart it within seconds when it dies or stops answering (it re-adopts the terminals from
 * tmux: nothing is lost), replace it between ticks when a newer build of agent-kernel is on
 * disk, and stop it gracefully when watch stops (the terminals stay in the container). A kernel
 * already running for the instance (an earlier watch's, one run by hand) is adopted, not doubled.
 */

export type KernelState = 'starting' | 'ready' | 'unresponsive' | 'restarting' | 'waiting' | 'stopping' | 'stopped';

export interface KernelStatus {
  state: KernelState;
  pid?: number;
  /** When the kernel process started, and how long it has served. */
  started?: string;
  uptimeSeconds?: number;
  /** The last heartbeat it answered. */
  lastHeartbeat?: string;
  terminals?: number;
  /** starting, ready or error (with terminalsError) */
  terminalsState?: string;
  terminalsError?: string;
  rssBytes?: number;
  sessions?: number;
  /** Kernels this watch started again after one died, hung or was replaced. */
  restarts: number;
  lastExit?: string;
  /** Why no kernel serves now (waiting for the lock, a crash loop). */
  reason?: string;
  /** A newer build is on disk; the kernel is replaced when no tick runs. */
  upgradePending?: boolean;
}

export interface KernelSupervisorOptions {
  instance: Instance;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** A tick runs now: an upgrade waits until none does. */
  tickRunning: () => boolean;
  /** The agent-kernel bin (default this package's dist/cli/agent-kernel.js). */
  bin?: string;
  heartbeatMs?: number;
  /** A heartbeat not answered within this long is missed. */
  heartbeatTimeoutMs?: number;
  /** Missed heartbeats in a row that make the kernel hung. */
  missedBeats?: number;
  readyTimeoutMs?: number;
  stopTimeoutMs?: number;
}

/** Why a kernel stopped being ours to watch. */
type Ending = 'exited' | 'hung' | 'upgrade' | 'stopping';

interface Watched {
  pid: number;
  /** Its start time (/proc), so that a hung adopted kernel is killed only if the PID is still it. */
  startTime: string | undefined;
  child?: ChildProcess;
  exited?: Promise<void>;
  stderrTail: string;
}

const STDERR_TAIL = 4096;
/** A kernel that said READY and served this long was not crash-looping: the next one starts at once. */
const SERVED_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;

export class KernelSupervisor {
  private readonly socketPath: string;
  private readonly bin: string;
  private state: KernelState = 'starting';
  private health: KernelHealth | undefined;
  private lastHeartbeat: Date | undefined;
  private restarts = 0;
  private lastExit: string | undefined;
  private reason: string | undefined;
  private current: Watched | undefined;
  private stopping = false;
  private readonly stopController = new AbortController();
  private loopDone: Promise<void> = Promise.resolve();
  private readyWaiters: Array<() => void> = [];
  private settleFirst: () => void = () => {};
  /** Resolves once the first kernel said READY, or failed to. */
  readonly firstAttempt = new Promise<void>((resolve) => {
    this.settleFirst = resolve;
  });

  constructor(private readonly options: KernelSupervisorOptions) {
    this.socketPath = kernelSocketPath(options.instance.paths.stateRoot, options.env);
    this.bin = options.bin ?? packageFiles().serverBin;
  }

  get log(): Logger {
    return this.options.logger;
  }

  start(): void {
    this.loopDone = this.loop().catch((error: unknown) => this.log.error({ err: error }, `kernel supervision ended: ${describeError(error)}`));
  }

  /** Resolves true once a kernel has said READY (now or before), false after `timeoutMs`. */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.state === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.readyWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  status(): KernelStatus {
    const health = this.health;
    const now = Date.now();
    return {
      state: this.state,
      restarts: this.restarts,
      ...(this.current ? { pid: this.current.pid } : {}),
      ...(health && this.current
        ? {
            started: health.started,
            uptimeSeconds: Math.round((now - Date.parse(health.started)) / 1000),
            terminals: health.terminals.count,
            terminalsState: health.terminals.state,
            ...(health.terminals.error ? { terminalsError: health.terminals.error } : {}),
            rssBytes: health.rssBytes,
            sessions: health.sessions,
            ...(health.build !== this.buildOnDisk() ? { upgradePending: true } : {}),
          }
        : {}),
      ...(this.lastHeartbeat ? { lastHeartbeat: this.lastHeartbeat.toISOString() } : {}),
      ...(this.lastExit ? { lastExit: this.lastExit } : {}),
      ...(this.reason ? { reason: this.reason } : {}),
    };
  }

  /** Stop the kernel gracefully (it detaches; the terminals stay in the container). Call after the tick has stopped. */
  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.stopController.abort();
    }
    await this.loopDone;
  }

  private buildOnDisk(): string {
    return bundleIdentity(this.bin);
  }

  private async loop(): Promise<void> {
    // Kernels in a row that never served (no READY, or gone within a second): those back off.
    let failures = 0;
    while (!this.stopping) {
      const kernel = (await this.adopt()) ?? (await this.launch());
      const readyAt = Date.now();
      this.settleFirst();
      let ending: Ending = 'exited';
      if (kernel) {
        this.current = kernel;
        ending = await this.monitor(kernel);
        if (ending === 'stopping') {
          await this.stopKernel(kernel);
          break;
        }
      }
      this.current = undefined;
      this.health = undefined;
      if (this.stopping) break;
      failures = kernel && (ending === 'upgrade' || Date.now() - readyAt >= SERVED_MS) ? 0 : failures + 1;
      this.restarts += 1;
      this.state = kernel ? 'restarting' : 'waiting';
      const delay = failures <= 1 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 500 * 2 ** (failures - 2));
      if (delay > 0) this.log.warn({ delayMs: delay, failures }, `starting the kernel again in ${Math.round(delay / 100) / 10} s`);
      await sleep(delay, this.stopController.signal);
    }
    this.state = 'stopped';
    this.settleFirst();
  }

  /** A kernel already serving this instance (an earlier watch's, or one run by hand). */
  private async adopt(): Promise<Watched | undefined> {
    const health = await kernelHealth(this.socketPath, 2000).catch(() => undefined);
    if (!health || health.dataDir !== this.options.instance.dataDir || !isProcessAlive(health.pid)) return undefined;
    this.log.info({ pid: health.pid, socket: this.socketPath }, 'a kernel already serves this instance: watching it');
    this.beat(health);
    this.markReady();
    return { pid: health.pid, startTime: processStartTime(health.pid), stderrTail: '' };
  }

  /** Start a kernel and wait for its READY line; undefined when it exits first or stays silent. */
  private async launch(): Promise<Watched | undefined> {
    this.state = this.restarts === 0 ? 'starting' : 'restarting';
    const { env, instance } = this.options;
    // The same registry and state directory as watch, whatever the environment's XDG folders say.
    const kernelEnv: NodeJS.ProcessEnv = { ...env, ...serverEnv(env) };
    delete kernelEnv.AGENT_KERNEL_CLIENT;
    // Its own process group: Ctrl-C at watch's terminal reaches watch, which stops the tick first.
    const child = spawn(process.execPath, [this.bin, 'kernel', instance.dataDir], { env: kernelEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const kernel: Watched = { pid: child.pid ?? -1, startTime: child.pid ? processStartTime(child.pid) : undefined, child, stderrTail: '' };
    let exit: string | undefined;
    kernel.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        exit = signal ? `killed by ${signal}` : `exit ${code}`;
        resolve();
      });
      child.once('error', (error) => {
        exit = `could not start: ${error.message}`;
        resolve();
      });
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      kernel.stderrTail = (kernel.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    let stdout = '';
    const ready = new Promise<boolean>((resolve) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout = (stdout + chunk.toString('utf8')).slice(-STDERR_TAIL);
        if (/^READY /m.test(stdout)) resolve(true);
      });
      void kernel.exited?.then(() => resolve(false));
      setTimeout(() => resolve(false), this.options.readyTimeoutMs ?? 60_000).unref();
    });
    this.log.info({ pid: child.pid }, 'kernel starting');
    if (await ready) {
      this.log.info({ pid: child.pid, socket: this.socketPath }, 'kernel ready');
      const events = instance.paths.events;
      await appendEvent(events, { type: 'kernel.started', ...(child.pid ? { pid: child.pid } : {}) });
      void kernel.exited?.then(() => appendEvent(events, { type: 'kernel.stopped', ...(exit ? { reason: exit } : {}) }));
      this.reason = undefined;
      this.markReady();
      return kernel;
    }
    if (exit === undefined) {
      this.log.error({ pid: child.pid }, 'the kernel did not say READY in time; killing it');
      signalGroup(kernel.pid, 'SIGKILL');
      await kernel.exited;
    }
    const why = lastLine(kernel.stderrTail) ?? exit ?? 'no READY';
    this.lastExit = `${exit ?? 'killed'} before READY at ${new Date().toISOString()}: ${why}`;
    this.reason = why;
    this.log.warn({ exit, stderr: kernel.stderrTail.slice(-1000) }, `the kernel did not start: ${why}`);
    return undefined;
  }

  private markReady(): void {
    this.state = 'ready';
    for (const waiter of this.readyWaiters.splice(0)) waiter();
  }

  private beat(health: KernelHealth): void {
    this.health = health;
    this.lastHeartbeat = new Date();
  }

  /** Heartbeats until the kernel exits, hangs, is due an upgrade between ticks, or watch stops. */
  private async monitor(kernel: Watched): Promise<Ending> {
    const interval = this.options.heartbeatMs ?? 2000;
    const allowed = this.options.missedBeats ?? 3;
    let missed = 0;
    for (;;) {
      // Our own child's exit is seen at once; an adopted kernel's at the next heartbeat.
      await Promise.race([sleep(interval, this.stopController.signal), ...(kernel.exited ? [kernel.exited] : [])]);
      if (this.stopping) return 'stopping';
      if (!this.alive(kernel)) return this.ended(kernel, 'exited');
      const health = await kernelHealth(this.socketPath, this.options.heartbeatTimeoutMs ?? 2000).catch(() => undefined);
      if (health && health.pid === kernel.pid) {
        missed = 0;
        this.beat(health);
        if (this.state !== 'ready') this.markReady();
        if (health.build !== this.buildOnDisk() && !this.options.tickRunning()) {
          this.log.info({ running: health.build, onDisk: this.buildOnDisk() }, 'a newer agent-kernel is installed: replacing the kernel between ticks');
          await this.stopKernel(kernel);
          return this.ended(kernel, 'upgrade');
        }
        continue;
      }
      if (!this.alive(kernel)) return this.ended(kernel, 'exited');
      missed += 1;
      this.state = 'unresponsive';
      this.log.warn({ pid: kernel.pid, missed }, 'the kernel missed a heartbeat');
      if (missed >= allowed) {
        this.log.error({ pid: kernel.pid, missed }, `the kernel has not answered ${missed} heartbeats: killing it and starting another`);
        this.kill(kernel);
        await this.gone(kernel, 5000);
        return this.ended(kernel, 'hung');
      }
    }
  }

  private ended(kernel: Watched, how: Ending): Ending {
    const tail = lastLine(kernel.stderrTail);
    const what = how === 'hung' ? 'killed: it stopped answering its heartbeat' : how === 'upgrade' ? 'replaced by a newer build' : 'exited';
    this.lastExit = `${what} at ${new Date().toISOString()}${how === 'exited' && tail ? `: ${tail}` : ''}`;
    if (how === 'exited') this.log.error({ pid: kernel.pid, stderr: kernel.stderrTail.slice(-1000) }, 'the kernel exited; starting another');
    return how;
  }

  private alive(kernel: Watched): boolean {
    if (kernel.child) return kernel.child.exitCode === null && kernel.child.signalCode === null;
    return isProcessAlive(kernel.pid) && processStartTime(kernel.pid) === kernel.startTime;
  }

  /** SIGKILL: our child's whole group; an adopted kernel only while its PID is still that process. */
  private kill(kernel: Watched): void {
    if (kernel.child) signalGroup(kernel.pid, 'SIGKILL');
    else if (kernel.startTime !== undefined && processStartTime(kernel.pid) === kernel.startTime) process.kill(kernel.pid, 'SIGKILL');
  }

  private async gone(kernel: Watched, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.alive(kernel)) return true;
      await sleep(50);
    }
    return !this.alive(kernel);
  }

  /** Ask it to stop (it detaches from the terminals and releases the lock); kill it if it does not. */
  private async stopKernel(kernel: Watched): Promise<void> {
    this.state = 'stopping';
    await kernelRequest(this.socketPath, 'POST', '/v1/stop', 5000).catch(() => {
      if (kernel.child) signalGroup(kernel.pid, 'SIGTERM');
    });
    if (await this.gone(kernel, this.options.stopTimeoutMs ?? 30_000)) {
      this.log.info({ pid: kernel.pid }, 'kernel stopped; the terminals live on in the container');
      return;
    }
    this.log.error({ pid: kernel.pid }, 'the kernel did not stop in time: killing it');
    this.kill(kernel);
    await this.gone(kernel, 5000);
  }
}

function lastLine(text: string): string | undefined {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines.at(-1);
  if (line === undefined) return undefined;
  // The kernel logs JSON: its message is what a person reads.
  try {
    const parsed = JSON.parse(line) as { msg?: unknown };
    if (typeof parsed.msg === 'string') return parsed.msg;
  } catch {
    // a plain line
  }
  return line;
}
