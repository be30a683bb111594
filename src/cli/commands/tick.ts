import { resolveInstance } from '../../config/instance.js';
import { KernelError, isKernelError } from '../../errors.js';
import { createLogger } from '../../log/logger.js';
import { formatTickSummary } from '../../runner/summary.js';
import { startTick } from '../../runner/tick.js';
import { type Command, EXIT } from '../command.js';

function parseArgs(args: string[]): { name: string; messages: string[] } {
  let name: string | undefined;
  const messages: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--message' || arg === '-m') {
      const value = args[++i];
      if (value === undefined) throw new KernelError('USAGE', '--message needs a value: kernel-runner tick <name> --message "text"');
      messages.push(value);
    } else if (arg.startsWith('-')) {
      throw new KernelError('USAGE', `Unknown option ${arg}. usage: kernel-runner tick <name> [--message <text>]...`);
    } else if (name === undefined) {
      name = arg;
    } else {
      throw new KernelError('USAGE', `Unexpected argument ${JSON.stringify(arg)}. usage: kernel-runner tick <name> [--message <text>]...`);
    }
  }
  if (!name) throw new KernelError('USAGE', 'usage: kernel-runner tick <name> [--message <text>]...');
  return { name, messages };
}

export const tickCommand: Command = {
  name: 'tick',
  summary: 'Run one tick of an instance: Claude Code against the kernel. Exit 0 ok, 1 failed, 2 usage, 3 not ready or paused.',
  usage: 'tick <name-or-dir> [--message <text>]...',
  async run(args) {
    const { name, messages } = parseArgs(args);
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
        signal: controller.signal,
        onProgress: (line) => process.stderr.write(`${line}\n`),
      });
      const outcome = await running.done;
      process.stdout.write(formatTickSummary(instance.name, outcome) + '\n');
      if (outcome.status === 'ok') return EXIT.OK;
      if (outcome.paused) return EXIT.NOT_READY;
      return EXIT.FAILED;
    } catch (error) {
      if (isKernelError(error, 'TICK_RUNNING')) {
        process.stderr.write(`kernel-runner tick: ${error.message}\n`);
        return EXIT.NOT_READY;
      }
      throw error;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};
