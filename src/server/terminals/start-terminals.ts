import type { Instance } from '../../config/instance.js';
import type { Logger } from '../../log/logger.js';
import { EgressRefusals } from '../../sandbox/egress/refusals.js';
import { connectEngine, engineSetting } from '../../sandbox/engine/engine.js';
import { openSandboxInStages } from '../../sandbox/container/open-sandbox.js';
import type { TerminalObserver } from '../../observe/terminal-observer.js';
import { type InstanceLock, acquireInstanceLock } from '../../tty/instance-lock.js';
import type { TtyManager } from '../../tty/tty-manager.js';
import { recordTerminals } from './record-terminals.js';
import type { NetworkSummary, Terminals } from './terminals.js';
import { loadTickPlace } from './tick.js';

/** The real TtyManager seen as the Terminals the tools use. */
export function terminalsOf(
  manager: TtyManager,
  where: string,
  maxTtys: number,
  extras: { egress?: { refusals: EgressRefusals; network: NetworkSummary } | undefined; observer?: TerminalObserver | undefined; release?: () => Promise<void> } = {},
): Terminals {
  const { egress, observer, release } = extras;
  return {
    where,
    get broken() {
      return manager.broken;
    },
    network: egress?.network,
    maxTtys,
    get adoptReport() {
      return manager.adoptReport;
    },
    setTick: (tick, between = false) => {
      manager.setTick(tick);
      observer?.setTick(tick, between);
    },
    open: (options = {}) => manager.open(options),
    type: (input) => manager.type(input),
    wait: (options) => manager.wait(options),
    delivered: (deliveryId) => manager.delivered(deliveryId),
    close: (tty) => manager.close(tty),
    list: () => Promise.resolve(manager.list()),
    watchScreen: (tty, history, onOutput, ended) => manager.watchScreen(tty, history, onOutput, ended),
    typeAsPerson: (tty, data) => manager.typeAsPerson(tty, data),
    takeNotices: () => egress?.refusals.takeNotices() ?? [],
    dispose: async () => {
      egress?.refusals.stop();
      try {
        await manager.dispose();
        await observer?.close();
      } finally {
        await release?.();
      }
    },
  };
}

export interface StartTerminalsOptions {
  /** false: on the host backend, PTYs even where tmux is installed. */
  hostTmux?: boolean;
  /**
   * The instance lock, held by the caller for its whole life (the kernel):
   * then nobody else may change the container between two start-ups. Absent: taken here first
   * and released when the terminals are disposed.
   */
  lock?: InstanceLock;
}

/**
 * Bring an instance's terminals up: the instance lock first (before anything may change the
 * container), the sandbox (engine, image, container: refused when another state directory
 * owns it), then the TtyManager, which re-adopts the TTYs still in tmux, while the
 * container's egress is checked. Ready when both are.
 */
export async function startTerminals(instance: Instance, logger: Logger, options: StartTerminalsOptions = {}): Promise<Terminals> {
  const lock = options.lock ?? (await acquireInstanceLock(instance.paths.instanceLock, 'serve'));
  try {
    return await startLocked(instance, logger, { ...(options.hostTmux === undefined ? {} : { hostTmux: options.hostTmux }), lock }, options.lock === undefined);
  } catch (error) {
    if (options.lock === undefined) await lock.release();
    throw error;
  }
}

async function startLocked(instance: Instance, logger: Logger, options: { hostTmux?: boolean; lock: InstanceLock }, ownLock: boolean): Promise<Terminals> {
  // The terminal layer (emulator included) loads while the engine answers.
  const ttyLayer = import('../../tty/tty-manager.js');
  ttyLayer.catch(() => undefined); // reported where it is awaited
  const place = loadTickPlace(instance.paths.state, logger);
  const { sandbox, finished } = await openSandboxInStages(instance, {
    logger,
    onProgress: (line: string) => logger.info({ phase: 'start-up' }, line),
  });
  const engine = sandbox.kind === 'docker' ? connectEngine({ socket: engineSetting(instance.config.container) }) : undefined;
  const started = (async () => {
    const { TtyManager } = await ttyLayer;
    return TtyManager.start({ instance, sandbox, logger, tick: (await place).tick, lock: options.lock, ...(options.hostTmux === undefined ? {} : { hostTmux: options.hostTmux }) });
  })();
  const [manager, sandboxDone, engineDone] = await Promise.allSettled([started, finished, engine]);
  if (manager.status === 'rejected' || sandboxDone.status === 'rejected' || engineDone.status === 'rejected') {
    if (manager.status === 'fulfilled') await manager.value.dispose().catch(() => undefined);
    throw [sandboxDone, manager, engineDone].flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []))[0];
  }
  logger.info({ sandbox: sandbox.description }, 'sandbox ready');
  const egress = engineDone.value
    ? {
        refusals: new EgressRefusals(engineDone.value, instance, logger).start(),
        network: { policy: instance.config.container.network, allowed: instance.config.container.allow.length },
      }
    : undefined;
  return terminalsOf(manager.value, sandbox.description, instance.config.tty.max_ttys, {
    egress,
    observer: recordTerminals(manager.value, instance, (await place).tick, (await place).between),
    // A lock taken here goes with the terminals.
    ...(ownLock ? { release: () => options.lock.release() } : {}),
  });
}
