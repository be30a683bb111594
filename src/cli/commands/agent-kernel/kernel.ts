import { resolveInstance } from '../../../config/instance.js';
import { createLogger } from '../../../log/logger.js';
import { readyLine } from '../../../kernel/protocol.js';
import { runKernel } from '../../../kernel/host/run-kernel.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, err, out } from '../command.js';

const USAGE = 'kernel <name-or-dir> [--log-level LEVEL]';

export const kernelCommand: Command = {
  name: 'kernel',
  summary: "Run an instance's long-lived kernel: it owns the terminals, keeps reading them between ticks, and every client connects to it (kernel-runner watch runs it).",
  usage: USAGE,
  options: [
    ["--log-level LEVEL", "debug, info, warn or error"],
  ],
  examples: [
    "agent-kernel kernel demo   # normally kernel-runner watch demo runs it",
  ],
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, {
      usage: `agent-kernel ${USAGE}`,
      options: { 'log-level': { type: 'string' } },
      positionals: { min: 1, max: 1 },
      missing: 'Which instance?',
    });
    const instance = await resolveInstance(positionals[0] as string);
    const logger = createLogger({ process: 'kernel', logDir: instance.paths.logs, ...(values['log-level'] ? { level: values['log-level'] } : {}) });
    // A bug in a callback must not take the terminals away: log it and serve on.
    process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection (the kernel keeps running)'));
    process.on('uncaughtException', (error) => logger.fatal({ err: error }, 'uncaught exception (the kernel keeps running)'));
    const kernel = await runKernel(instance, { logger, hostTmux: process.env.AGENT_KERNEL_HOST_TMUX !== '0' });
    // Seed 003's handshake: whoever started us reads this line once we serve.
    out(`${readyLine(kernel.socketPath)}\n`);
    err(`agent-kernel kernel: ${instance.name} is served on ${kernel.socketPath}; agent-kernel serve ${instance.name} connects to it. Ctrl-C stops (the terminals live on).\n`);
    const onSignal = (signal: NodeJS.Signals) => {
      void kernel.stop(signal);
      // A second signal while stopping means: now.
      process.once(signal, () => process.exit(EXIT.FAILED));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    process.once('SIGHUP', onSignal);
    await kernel.stopped;
    setImmediate(() => process.exit(EXIT.OK));
    return EXIT.OK;
  },
};
