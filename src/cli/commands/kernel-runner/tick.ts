import { agentFilesFor } from '../../../sandbox/container/agent-files-for.js';
import { resolveInstance } from '../../../config/instance.js';
import { isCodedError } from '../../../errors.js';
import { createLogger } from '../../../log/logger.js';
import { formatTickSummary } from '../../../runner/tick/summary.js';
import { frameOperatorNote } from '../../../mail/framing.js';
import { PostOffice } from '../../../mail/post-office.js';
import { type RunningTick, startTick } from '../../../runner/tick/tick.js';
import { MailQueue } from '../../../mail/mail-queue.js';
import { tickEnvironment } from '../../../runner/secrets/secrets.js';
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
  options: [
    ["--message TEXT, -m TEXT", "a message for the agent in this tick; repeatable"],
  ],
  examples: [
    "kernel-runner tick demo",
    "kernel-runner tick demo -m \"look at the failing build\"",
  ],
  async run(args) {
    const { name, messages } = parseTickArgs(args);
    const instance = await resolveInstance(name);
    const logger = createLogger({ process: 'tick', logDir: instance.paths.logs });
    const controller = new AbortController();
    const onSignal = (): void => controller.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    // Mail waiting in the post office goes with this tick too, and what the agent sends meanwhile goes out.
    const mail = new MailQueue(() => instance, logger, process.env);
    const postOffice = new PostOffice({ instance: () => instance, logger, files: agentFilesFor(instance) });
    try {
      await postOffice.start();
      const queued = await mail.next();
      const running: RunningTick = await startTick(instance, {
        logger,
        messages: [...messages.map(frameOperatorNote), ...queued],
        // The same environment watch gives a tick: the secrets directory, then runner.env.
        env: { ...process.env, ...(await tickEnvironment(instance, logger)) },
        signal: controller.signal,
        onProgress: (line) => err(`${finalText(line)}\n`),
        onInContext: (had) => mail.inContext(had, running.tick),
      });
      for (const text of queued) mail.taken(text);
      const outcome = await running.done;
      await mail.endTick(outcome.tick);
      await postOffice.collect();
      out(formatTickSummary(instance.name, outcome) + '\n');
      if (outcome.status === 'ok') return EXIT.OK;
      if (outcome.paused) return EXIT.NOT_READY;
      return EXIT.FAILED;
    } catch (error) {
      if (isCodedError(error, 'TICK_RUNNING')) {
        err(`kernel-runner tick: ${error.message}\n`);
        return EXIT.NOT_READY;
      }
      throw error;
    } finally {
      await postOffice.stop();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};
