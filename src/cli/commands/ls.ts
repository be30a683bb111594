import { resolveInstance } from '../../config/instance.js';
import { KernelError } from '../../errors.js';
import { formatTtyTable, readTtyStatuses } from '../../observe/tty-status.js';
import { type Command, EXIT } from '../command.js';

export const lsCommand: Command = {
  name: 'ls',
  summary: "List an instance's TTYs with program, state and unseen lines.",
  usage: 'ls <name-or-dir> [--json]',
  async run(args) {
    const json = args.includes('--json');
    const rest = args.filter((a) => a !== '--json');
    const unknown = rest.find((a) => a.startsWith('-'));
    if (unknown !== undefined) throw new KernelError('USAGE', `Unknown option ${unknown}. Usage: agent-kernel ls <name-or-dir> [--json]`);
    if (rest.length !== 1) throw new KernelError('USAGE', 'Usage: agent-kernel ls <name-or-dir> [--json]');
    const instance = await resolveInstance(rest[0] as string);
    const rows = await readTtyStatuses(instance.paths.sessions);
    process.stdout.write(json ? `${JSON.stringify(rows, null, 2)}\n` : `${formatTtyTable(rows)}\n`);
    return EXIT.OK;
  },
};
