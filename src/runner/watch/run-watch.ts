import { rm } from 'node:fs/promises';
import { resolveInstance } from '../../config/instance.js';
import { type Logger, createLogger } from '../../log/logger.js';
import { appendEvent } from '../../observe/events/event-log.js';
import { checkHarnessAvailable } from '../harnesses/harness-check.js';
import { KernelSupervisor } from '../../kernel/supervisor/kernel-supervisor.js';
import { type StatusServer, startStatusServer, statusSocketPath } from './service/status-api.js';
import { detectInterruptedTick, realStartTick } from './tick-adapter.js';
import { Watch } from './watch.js';
import type { StartTickFn } from './watch-tick.js';

export interface RunWatchOptions {
  env?: NodeJS.ProcessEnv;
  /** Defaults to the real tick; tests may inject another. */
  startTick?: StartTickFn;
  logger?: Logger;
  pollMs?: number;
  /** Run and supervise the instance's kernel (default true; tests of the loop alone turn it off). */
  kernel?: boolean;
}

export interface RunningWatch {
  readonly watch: Watch;
  readonly socketPath: string;
  readonly logger: Logger;
  /** The instance's kernel under supervision (absent with `kernel: false`). */
  readonly kernel?: KernelSupervisor;
  /** Stop gracefully: the running tick is stopped (SIGINT, grace period, kill), then the kernel, the socket removed. */
  stop(): Promise<void>;
  /** Resolves once watch has stopped. */
  readonly stopped: Promise<void>;
}

/**
 * `kernel-runner watch <name>`: resolve the instance, check its harness is installed (a
 * missing binary fails here, not at the first tick), serve the status socket, start the loop.
 */
export async function runWatch(nameOrDir: string, options: RunWatchOptions = {}): Promise<RunningWatch> {
  const env = options.env ?? process.env;
  const instance = await resolveInstance(nameOrDir, env);
  const logger = options.logger ?? createLogger({ process: `watch-${instance.name}`, logDir: instance.paths.logs });
  const harnessPath = checkHarnessAvailable(instance, env);
  const watch = new Watch(instance, {
    startTick: options.startTick ?? realStartTick(env),
    loadInstance: () => resolveInstance(instance.dataDir, env).then((fresh) => ({ ...fresh, name: instance.name })),
    detectInterruptedTick,
    logger,
    env,
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
  });
  const kernel = options.kernel === false ? undefined : new KernelSupervisor({ instance, env, logger, tickRunning: () => watch.status().running });
  const socketPath = statusSocketPath(instance.name, env);
  const server: StatusServer = await startStatusServer(socketPath, () => [{ ...watch.status(), ...(kernel ? { kernel: kernel.status() } : {}) }]);
  // The kernel first (it says READY within a second or so: it serves before the container is up), so
  // that the first tick finds it: the terminals are read from now on, tick or not.
  kernel?.start();
  await kernel?.firstAttempt;
  try {
    await watch.start();
  } catch (error) {
    await kernel?.stop();
    await server.close();
    await rm(socketPath, { force: true });
    throw error;
  }
  logger.info(
    { instance: instance.name, dataDir: instance.dataDir, harness: instance.config.runner.harness, harnessPath, socket: socketPath, pid: process.pid },
    `watching ${instance.name}`,
  );
  await appendEvent(instance.paths.events, { type: 'watch.started', pid: process.pid });
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // The tick gets its grace period first, then the kernel detaches (the terminals live on).
      await watch.stop();
      await kernel?.stop();
      await server.close();
      await rm(socketPath, { force: true });
      logger.info('watch stopped');
      await appendEvent(instance.paths.events, { type: 'watch.stopped', pid: process.pid });
    })());
  const stopped = watch.stopped.then(() => stopping);
  return { watch, socketPath, logger, ...(kernel ? { kernel } : {}), stop, stopped: stopped.then(() => undefined) };
}
