import { resolveInstance } from '../../../../config/instance.js';
import { moveInstance } from '../../../../runner/instances/move-engine.js';
import { parseCommandArgs, usageError } from '../../args.js';
import { type Command, EXIT, out } from '../../command.js';
import { lostTerminalsLine, restoreRun } from './restore-run.js';

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
    const run = restoreRun(instance, 'move', (_error, snapshot) => ({ why: `Moving to ${target} failed`, next: `kernel-runner rollback ${instance.name} ${snapshot ?? '<the snapshot it took>'}` }));
    const report = await moveInstance(instance, target, run);
    out(
      `Moved ${instance.name} from ${report.from} to ${report.to} in ${run.took()}: ${report.dataEntries} entries of the data directory and ${report.containerEntries} container changes restored and checked against their digests; the container runs there.\n` +
        lostTerminalsLine(report.terminals, 'No terminal was open.') +
        `Snapshot ${report.id} holds the state as moved (kernel-runner rollback ${instance.name} ${report.id} brings it back there). To move it back: kernel-runner move ${instance.name} --engine <the old one>.\n`,
    );
    return EXIT.OK;
  },
};
