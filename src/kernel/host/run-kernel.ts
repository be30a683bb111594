import type { Instance } from '../../config/instance.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { bundleIdentity } from '../build.js';
import type { KernelHealth } from '../protocol.js';
import { kernelSocketPath } from '../socket-path.js';
import { type InstanceLock, type LockFacts, acquireInstanceLock, tryInstanceLock } from '../../tty/instance-lock.js';
import { readLockHolder } from '../../util/process/pid-lock.js';
import { TerminalsRuntime } from '../../server/terminals/runtime.js';
import { SERVER_VERSION } from '../../server/version.js';
import { terminalsWentAway } from '../../server/tools/terminals-lost.js';
import type { KernelHost } from './kernel-host.js';
import { prepareSandboxForTick } from './prepare-sandbox.js';

/**
 * An instance's kernel (`agent-kernel kernel NAME`, started by watch): the one process that owns
 * the instance's terminals for as long as it runs. It holds the instance lock, starts the
 * terminals at once and keeps reading them (so the per-terminal files, recordings, events and
 * egress notices go on between ticks), restarts them when tmux or the container goes away, and
 * serves every client on its socket. Stopping it detaches: the terminals live on in tmux.
 */

export interface RunningKernel {
  readonly socketPath: string;
  /** Resolves once the kernel has stopped (the lock released, the socket removed). */
  readonly stopped: Promise<void>;
  stop(why: string): Promise<void>;
}

export interface RunKernelOptions {
  logger: Logger;
  /** false: on the host backend, PTYs even where tmux is installed. */
  hostTmux?: boolean;
  /** How often the terminals are checked (broken, failed start-up). Default 2 s. */
  keepMs?: number;
  /** `serve`: hosted by a serve for its client's time (said in the lock, so its other clients may host it after). */
  hostedBy?: 'serve';
}

/** Longest pause between two start-up attempts that failed (an engine that is down). */
const MAX_RETRY_MS = 30_000;

/** How long a kernel waits while kernel-runner holds the instance to bring its container up for a tick. */
const RUNNER_HOLDS_MS = 30_000;

/** The instance lock; while the runner holds it for a moment (a tick's container start), wait for it. */
async function takeInstance(file: string, facts: LockFacts, logger: Logger): Promise<InstanceLock> {
  const deadline = Date.now() + RUNNER_HOLDS_MS;
  for (let attempt = 0; ; attempt++) {
    const taken = await tryInstanceLock(file, 'kernel', facts);
    if ('lock' in taken) return taken.lock;
    if (taken.holder.role !== 'runner' || Date.now() > deadline) return acquireInstanceLock(file, 'kernel', facts);
    if (attempt === 0) logger.info({ pid: taken.holder.pid }, 'kernel-runner is bringing the container up for a tick; waiting for the instance');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function runKernel(instance: Instance, options: RunKernelOptions): Promise<RunningKernel> {
  const { logger } = options;
  const socketPath = kernelSocketPath(instance.paths.stateRoot);
  // First, before anything may touch the container: the instance is ours, or this fails (INSTANCE_LOCKED).
  const lock = await takeInstance(instance.paths.instanceLock, { socket: socketPath, ...(options.hostedBy ? { hostedBy: options.hostedBy } : {}) }, logger);
  const started = new Date();
  const build = bundleIdentity(process.argv[1] ?? '');
  const runtime = new TerminalsRuntime(
    async () => (await import('../../server/terminals/start-terminals.js')).startTerminals(instance, logger, { lock, ...(options.hostTmux === undefined ? {} : { hostTmux: options.hostTmux }) }),
    logger,
  );
  let stopping: Promise<void> | undefined;
  let terminalCount = 0;
  let host: KernelHost | undefined;
  let markStopped: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    markStopped = resolve;
  });

  const health = (sessions: number): KernelHealth => {
    const memory = process.memoryUsage();
    const start = runtime.startState;
    return {
      state: stopping ? 'stopping' : start.state === 'ready' ? 'ready' : 'starting',
      instance: instance.name,
      dataDir: instance.dataDir,
      pid: process.pid,
      version: SERVER_VERSION,
      build,
      started: started.toISOString(),
      uptimeSeconds: Math.round((Date.now() - started.getTime()) / 1000),
      now: new Date().toISOString(),
      terminals: { ...start, count: terminalCount },
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      sessions,
    };
  };

  // Only the owner brings the container up to date; a tick asks for it here instead of doing it itself.
  const prepareSandbox = (onProgress: (line: string) => void) => prepareSandboxForTick(instance, runtime, logger, onProgress);

  // Keep the terminals read whether or not anyone is connected: start them again when they break or failed to start.
  let retryAt = 0;
  let retryMs = 1000;
  const keep = async () => {
    if (stopping) return;
    // Exactly one owner: a kernel whose lock was taken from it, or whose instance was removed, stops.
    const holder = await readLockHolder(instance.paths.instanceLock);
    if (holder?.pid !== process.pid) {
      logger.error({ lock: instance.paths.instanceLock, holder }, 'the instance lock is no longer this kernel\'s; stopping');
      void stop('lost the instance lock');
      return;
    }
    const current = runtime.current;
    if (current?.broken !== undefined) {
      logger.warn({ reason: current.broken }, 'the terminals stopped working; starting them again');
      // The sessions' next call says why, as when that call itself had noticed.
      terminalsWentAway(runtime, current.broken);
      await runtime.invalidate(current);
      retryAt = 0;
    }
    if (runtime.current) {
      terminalCount = (await runtime.current.list()).length;
      retryMs = 1000;
      return;
    }
    if (runtime.startState.state === 'error') {
      if (Date.now() < retryAt) return;
      retryAt = Date.now() + retryMs;
      retryMs = Math.min(MAX_RETRY_MS, retryMs * 2);
    }
    runtime.warmUp();
  };
  const keeper = setInterval(() => {
    keep().catch((error: unknown) => logger.error({ err: error }, `keeping the terminals failed: ${describeError(error)}`));
  }, options.keepMs ?? 2000);

  const stop = (why: string): Promise<void> =>
    (stopping ??= (async () => {
      logger.info({ why }, 'kernel stopping');
      clearInterval(keeper);
      await host?.close().catch((error: unknown) => logger.error({ err: error }, 'closing the kernel socket failed'));
      await runtime.dispose().catch((error: unknown) => logger.error({ err: error }, 'detaching from the terminals failed'));
      await lock.release();
      logger.info('kernel stopped; the terminals live on in tmux');
      markStopped();
    })());

  // The terminals first: the engine's and tmux's round trips overlap with loading the MCP SDK and opening the socket.
  runtime.warmUp();
  try {
    const { startKernelHost } = await import('./kernel-host.js');
    host = await startKernelHost({
      socketPath,
      hello: { instance: instance.name, dataDir: instance.dataDir, stateRoot: instance.paths.stateRoot, pid: process.pid, version: SERVER_VERSION },
      runtime,
      instance,
      logger,
      health,
      prepareSandbox,
      stop: () => void stop('asked to stop'),
    });
  } catch (error) {
    clearInterval(keeper);
    await runtime.dispose().catch(() => undefined);
    await lock.release();
    throw error;
  }
  logger.info({ instance: instance.name, socket: socketPath, pid: process.pid, build }, 'kernel serving');
  return { socketPath, stopped, stop };
}
