import { runWatch } from '../../../runner/watch/run-watch.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, err } from '../command.js';

export const watchCommand: Command = {
  name: 'watch',
  summary: 'Tick an instance when messages arrive, on schedule, and after crashes; serve its status socket.',
  usage: 'watch <name>',
  examples: [
    "kernel-runner watch scout   # Ctrl-C stops",
    "kernel-runner install scout # the same, as a systemd user unit",
  ],
  async run(args) {
    const { positionals } = parseCommandArgs(args, {
      usage: 'kernel-runner watch <name> (for example: kernel-runner watch scout)',
      options: {},
      positionals: { min: 1, max: 1 },
      missing: 'Name an instance.',
    });
    const name = positionals[0] as string;
    const running = await runWatch(name);
    err(`kernel-runner watch: watching ${running.watch.status().name}; status: kernel-runner status ${running.watch.status().name} (socket ${running.socketPath}). Ctrl-C stops.\n`);
    const onSignal = (signal: NodeJS.Signals) => {
      running.logger.info({ signal }, 'signal received: stopping (a running tick gets its grace period)');
      void running.stop();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      await running.stopped;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    return EXIT.OK;
  },
};
