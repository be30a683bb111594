import { resolveInstance } from '../../../../config/instance.js';
import { findSnapshot, rollback } from '../../../../snapshot/actions.js';
import { parseCommandArgs, usageError } from '../../args.js';
import { type Command, EXIT, out } from '../../command.js';
import { lostTerminalsLine, restoreRun } from './restore-run.js';

const USAGE = 'rollback <name> [<snapshot> | --before-tick <n>]';

export const rollbackCommand: Command = {
  name: 'rollback',
  summary: 'Bring an instance back to a snapshot (the newest, an id, or the one before tick N): data directory, container, terminal record; the state now is saved first.',
  usage: USAGE,
  options: [['--before-tick <n>', 'the newest snapshot taken before tick N started (each tick takes one first)']],
  examples: ['kernel-runner rollback scout --before-tick 12   # undo tick 12', 'kernel-runner rollback scout 6'],
  async run(args) {
    const usage = `kernel-runner ${USAGE}`;
    const { values, positionals } = parseCommandArgs(args, {
      usage,
      options: { 'before-tick': { type: 'string' } },
      positionals: { min: 1, max: 2 },
      missing: 'Name an instance.',
    });
    const beforeTick = values['before-tick'];
    if (beforeTick !== undefined && (positionals[1] !== undefined || !/^[0-9]+$/.test(beforeTick))) throw usageError(usage, 'Give a snapshot id or --before-tick with a tick number, not both.');
    const instance = await resolveInstance(positionals[0] as string);
    const target = await findSnapshot(instance, beforeTick === undefined ? (positionals[1] === undefined ? {} : { id: positionals[1] }) : { beforeTick: Number(beforeTick) });
    const run = restoreRun(instance, 'rollback', () => ({ why: `Rolling back to snapshot ${target.id} failed`, next: `kernel-runner rollback ${instance.name} <another snapshot>` }));
    const report = await rollback(instance, target.id, run);
    const when = target.tick === undefined ? target.createdAt : `${target.createdAt}, ${target.trigger === 'before-tick' ? 'before' : 'after'} tick ${target.tick}`;
    out(
      `Rolled ${instance.name} back to snapshot ${target.id} (${when}) in ${run.took()}: ${report.dataEntries} entries of the data directory and ${report.containerEntries} container changes restored and checked against their digests.\n` +
        lostTerminalsLine(report.terminals, 'No terminal was open then.') +
        (report.imageChanged ? 'Its image has changed since then: the container was rebuilt from the restored Containerfile.\n' : '') +
        `The state before the rollback is snapshot ${report.saved}: kernel-runner rollback ${instance.name} ${report.saved} undoes this.\n`,
    );
    return EXIT.OK;
  },
};
