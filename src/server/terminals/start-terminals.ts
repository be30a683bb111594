import type { Instance } from '../../config/instance.js';
import type { Logger } from '../../log/logger.js';
import { EgressWatch } from '../../sandbox/egress-watch.js';
import { connectEngine } from '../../sandbox/engine.js';
import { openSandbox } from '../../sandbox/open-sandbox.js';
import type { TerminalObserver } from '../../observe/terminal-observer.js';
import { TtyManager } from '../../tty/tty-manager.js';
import { recordTerminals } from './record-terminals.js';
import type { NetworkSummary, Terminals } from './terminals.js';
import { loadTick } from './tick.js';

/** The real TtyManager seen as the Terminals the tools use. */
export function terminalsOf(
  manager: TtyManager,
  where: string,
  maxTtys: number,
  extras: { egress?: { watch: EgressWatch; network: NetworkSummary } | undefined; observer?: TerminalObserver | undefined } = {},
): Terminals {
  const { egress, observer } = extras;
  return {
    where,
    network: egress?.network,
    maxTtys,
    get adoptReport() {
      return manager.adoptReport;
    },
    setTick: (tick) => {
      manager.setTick(tick);
      observer?.setTick(tick);
    },
    open: (options = {}) => manager.open(options),
    type: (input) => manager.type(input),
    wait: ({ timeoutMs, signal, deliveryId, until }) => manager.wait(timeoutMs / 1000, signal, deliveryId, until),
    delivered: (deliveryId) => manager.delivered(deliveryId),
    close: (tty) => manager.close(tty),
    list: () => Promise.resolve(manager.list()),
    takeNotices: () => egress?.watch.takeNotices() ?? [],
    describeRecording: (tty) => observer?.describeRecording(tty),
    dispose: async () => {
      egress?.watch.stop();
      await manager.dispose();
      await observer?.close();
    },
  };
}

/**
 * Bring an instance's terminals up: the sandbox (engine, image, container), then the
 * TtyManager, which takes the instance lock and re-adopts the TTYs still in tmux.
 */
export async function startTerminals(instance: Instance, logger: Logger, options: { hostTmux?: boolean } = {}): Promise<Terminals> {
  const sandbox = await openSandbox(instance, {
    logger,
    onProgress: (line: string) => logger.info({ phase: 'start-up' }, line),
  });
  logger.info({ sandbox: sandbox.description }, 'sandbox ready');
  const tick = await loadTick(instance.paths.state, logger);
  const manager = await TtyManager.start({ instance, sandbox, logger, tick, ...options });
  const egress =
    sandbox.kind === 'docker'
      ? {
          watch: new EgressWatch(await connectEngine({ socket: instance.config.container.engine_socket }), instance, logger).start(),
          network: { policy: instance.config.container.network, allowed: instance.config.container.allow.length },
        }
      : undefined;
  return terminalsOf(manager, sandbox.description, instance.config.tty.max_ttys, { egress, observer: recordTerminals(manager, instance, tick) });
}
