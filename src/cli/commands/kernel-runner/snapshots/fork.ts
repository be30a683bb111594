import { resolveInstance } from '../../../../config/instance.js';
import { createLogger } from '../../../../log/logger.js';
import { forkInstance } from '../../../../runner/instances/fork.js';
import { parseCommandArgs } from '../../args.js';
import { type Command, EXIT, err, out } from '../../command.js';

const USAGE = 'fork <name> <new> [--from <snapshot>] [--data <dir>]';

export const forkCommand: Command = {
  name: 'fork',
  summary: "Make a new instance from one of an instance's snapshots (its newest, or --from): its own data directory, container, state and name; the original is untouched and the two change apart.",
  usage: USAGE,
  options: [
    ['--from <snapshot>', 'the snapshot id to start from (default: the newest; kernel-runner snapshots NAME lists them)'],
    ['--data <dir>', "the fork's data directory, which must not exist (default: beside the original's, named <new>)"],
  ],
  examples: ['kernel-runner snapshot scout && kernel-runner fork scout scout-b   # fork the state now', 'kernel-runner fork scout scout-old --from 6 --data ~/agents/scout-old'],
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, {
      usage: `kernel-runner ${USAGE}`,
      options: { from: { type: 'string' }, data: { type: 'string' } },
      positionals: { min: 2, max: 2 },
      missing: 'Name the instance to fork and the new one.',
    });
    const parent = await resolveInstance(positionals[0] as string);
    const name = positionals[1] as string;
    const logger = createLogger({ process: 'fork', logDir: parent.paths.logs });
    const started = Date.now();
    const report = await forkInstance(parent, name, {
      ...(values.from === undefined ? {} : { from: values.from }),
      ...(values.data === undefined ? {} : { dataDir: values.data }),
      logger,
      onProgress: (line) => err(`${line}\n`),
    });
    const { fork, from } = report;
    out(
      `Forked ${parent.name} into ${fork.name} from its snapshot ${from.id} (${from.createdAt}) in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
        `${report.dataEntries} entries of the data directory and ${report.containerEntries} container changes restored and checked against their digests.\n` +
        `Data directory: ${fork.dataDir}\nOperator's file: ${fork.paths.operatorConfig} (${parent.name}'s; secrets are not copied: kernel-runner secret set ${fork.name} VARIABLE)\n` +
        (report.terminals.length ? `Terminals open then, lost to the restart (their scrollback is kept): ${report.terminals.join('; ')}.\n` : '') +
        `Its first tick is told it is a fork (a message in its queue). Next: kernel-runner tick ${fork.name}\n`,
    );
    return EXIT.OK;
  },
};
