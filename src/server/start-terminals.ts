import type { Instance } from '../config/instance.js';
import type { Logger } from '../log/logger.js';
import { openSandbox } from '../sandbox/open-sandbox.js';
import type { TerminalObserver } from '../observe/terminal-observer.js';
import { TtyManager } from '../tty/tty-manager.js';
import { recordTerminals } from './record-terminals.js';
import type { Terminals } from './terminals.js';
import { loadTick } from './tick.js';

/** The real TtyManager seen as the Terminals the tools use. */
export function terminalsOf(manager: TtyManager, where: string, maxTtys: number, observer?: TerminalObserver): Terminals {
  return {
    where,
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
    wait: ({ timeoutMs, signal }) => manager.wait(timeoutMs / 1000, signal),
    close: (tty) => manager.close(tty),
    list: () => Promise.resolve(manager.list()),
    describeRecording: (tty) => observer?.describeRecording(tty),
    dispose: async () => {
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
  return terminalsOf(manager, sandbox.description, instance.config.tty.max_ttys, recordTerminals(manager, instance, tick));
}
