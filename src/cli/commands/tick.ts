import { resolveInstance } from '../../config/instance.js';
import { isKernelError } from '../../errors.js';
import { createLogger } from '../../log/logger.js';
import { formatTickSummary } from '../../runner/summary.js';
import { startTick } from '../../runner/tick.js';
import { tickEnvironment } from '../../runner/watch/secrets.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, finalText, out, err } from '../command.js';

/** Pure: the command line of `tick`. */
export function parseTickArgs(args: readonly string[]): { name: string; messages: string[] } {
  const { values, positionals } = parseCommandArgs(args, {
    usage: 'kernel-runner tick <name-or-dir> [--message <text>]...',
    options: { message: { type: 'string', short: 'm', multiple: true, default: [] } },
    positionals: { min: 1, max: 1 },
    missing: 'Name an instance.',
  });
  return { name: positionals[0] as string, messages: values.message };
}

export const tickCommand: Command = {
  name: 'tick',
  summary: 'Run one tick of an instance: Claude Code against the kernel. Exit 0 ok, 1 failed, 2 usage, 3 not ready or paused.',
  usage: 'tick <name-or-dir> [--message <text>]...',
  async run(args) {
    const { name, messages } = parseTickArgs(args);
    const instance = await resolveInstance(name);
    const logger = createLogger({ process: 'tick', logDir: instance.paths.logs });
    const controller = new AbortController();
    const onSignal = (): void => controller.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      const running = await startTick(instance, {
        logger,
        messages,
        // The same environment watch gives a tick: the secrets directory, then runner.env.
        env: { ...process.env, ...(await tickEnvironment(instance, logger)) },
        signal: controller.signal,
        onProgress: (line) => err(`${finalText(line)}\n`),
      });
      const outcome = await running.done;
      out(formatTickSummary(instance.name, outcome) + '\n');
      if (outcome.status === 'ok') return EXIT.OK;
      if (outcome.paused) return EXIT.NOT_READY;
      return EXIT.FAILED;
    } catch (error) {
      if (isKernelError(error, 'TICK_RUNNING')) {
        err(`kernel-runner tick: ${error.message}\n`);
        return EXIT.NOT_READY;
      }
      throw error;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};
