import { KernelError } from '../../errors.js';
import { runWatch } from '../../runner/watch/run-watch.js';
import { type Command, EXIT } from '../command.js';

export const watchCommand: Command = {
  name: 'watch',
  summary: 'Tick an instance when messages arrive, on schedule, and after crashes; serve its status socket.',
  usage: 'watch <name>',
  async run(args) {
    const [name, ...extra] = args;
    if (!name || extra.length > 0) throw new KernelError('USAGE', 'usage: kernel-runner watch <name> (for example: kernel-runner watch scout)');
    const running = await runWatch(name);
    process.stderr.write(`kernel-runner watch: watching ${running.watch.status().name}; status: kernel-runner status ${running.watch.status().name} (socket ${running.socketPath}). Ctrl-C stops.\n`);
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
