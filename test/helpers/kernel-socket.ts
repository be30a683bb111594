import type { Instance } from '../../src/config/instance.js';
import { type KernelHost, startKernelHost } from '../../src/kernel/host/kernel-host.js';
import { kernelSocketPath } from '../../src/kernel/socket-path.js';
import { silentLogger } from '../../src/log/logger.js';
import { TerminalsRuntime } from '../../src/server/terminals/runtime.js';
import { terminalsOf } from '../../src/server/terminals/start-terminals.js';
import type { TtyManager } from '../../src/tty/tty-manager.js';

/**
 * The kernel's socket for terminals a test started itself (a TtyManager of its own): the web
 * view, `serve` and the other clients reach them as they reach a running kernel's. Close it
 * before the manager is disposed.
 */
export async function kernelSocketFor(manager: TtyManager, instance: Instance): Promise<KernelHost & { socketPath: string }> {
  const logger = silentLogger();
  const terminals = terminalsOf(manager, 'test terminals', instance.config.tty.max_ttys);
  const runtime = new TerminalsRuntime(() => Promise.resolve(terminals), logger);
  await runtime.terminals();
  const socketPath = kernelSocketPath(instance.paths.stateRoot);
  const started = new Date().toISOString();
  const host = await startKernelHost({
    socketPath,
    hello: { instance: instance.name, dataDir: instance.dataDir, stateRoot: instance.paths.stateRoot, pid: process.pid, version: 'test' },
    runtime,
    instance,
    logger,
    // The web view's status asks it, as of a kernel that is up.
    health: (sessions) => ({
      state: 'ready',
      instance: instance.name,
      dataDir: instance.dataDir,
      pid: process.pid,
      version: 'test',
      build: 'test',
      started,
      uptimeSeconds: 0,
      now: new Date().toISOString(),
      terminals: { state: 'ready', count: manager.list().length },
      rssBytes: process.memoryUsage().rss,
      heapUsedBytes: process.memoryUsage().heapUsed,
      sessions,
    }),
    prepareSandbox: () => Promise.reject(new Error('no sandbox requests in tests')),
    stop: () => undefined,
  });
  return Object.assign(host, { socketPath });
}
