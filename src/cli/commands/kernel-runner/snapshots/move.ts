import { resolveInstance } from '../../../../config/instance.js';
import { describeError } from '../../../../errors.js';
import { createLogger } from '../../../../log/logger.js';
import { moveInstance } from '../../../../runner/instances/move-engine.js';
import { writePaused } from '../../../../runner/tick/paused.js';
import { parseCommandArgs, usageError } from '../../args.js';
import { type Command, EXIT, err, out } from '../../command.js';

/** Restoring a snapshot on another engine: the instance moves there. */
const MOVE_USAGE = 'move <name> --engine <engine>';

export const moveCommand: Command = {
  name: 'move',
  summary: 'Move an instance to another container engine: a snapshot, the container removed, container.engine set, the snapshot restored there and checked, the container started.',
  usage: MOVE_USAGE,
  options: [['--engine <engine>', 'docker, podman, or an address (unix:///path.sock, tcp://host:port, ssh://user@host), as container.engine takes it']],
  examples: ['kernel-runner move scout --engine podman', 'kernel-runner move scout --engine docker   # and back'],
  async run(args) {
    const usage = `kernel-runner ${MOVE_USAGE}`;
    const { values, positionals } = parseCommandArgs(args, {
      usage,
      options: { engine: { type: 'string' } },
      positionals: { min: 1, max: 1 },
      missing: 'Name an instance.',
    });
    const target = values.engine;
    if (target === undefined || target === '') throw usageError(usage, 'Say where to: --engine docker, --engine podman, or an engine address.');
    const instance = await resolveInstance(positionals[0] as string);
    const logger = createLogger({ process: 'move', logDir: instance.paths.logs });
    const started = Date.now();
    const report = await moveInstance(instance, target, {
      logger,
      onProgress: (line) => err(`${line}\n`),
      onFailed: async (error, snapshot) => {
        await writePaused(instance.paths, `Moving to ${target} failed: ${describeError(error)}`, undefined, [`kernel-runner rollback ${instance.name} ${snapshot}`]);
      },
    });
    const terminals = report.terminals.length
      ? `Terminals lost to the restart (their scrollback is kept; login reports them): ${report.terminals.join('; ')}.\n`
      : 'No terminal was open.\n';
    out(
      `Moved ${instance.name} from ${report.from} to ${report.to} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${report.dataEntries} entries of the data directory and ${report.containerEntries} container changes restored and checked against their digests; the container runs there.\n` +
        terminals +
        `Snapshot ${report.id} holds the state as moved (kernel-runner rollback ${instance.name} ${report.id} brings it back there). To move it back: kernel-runner move ${instance.name} --engine <the old one>.\n`,
    );
    return EXIT.OK;
  },
};
