import { KernelError } from '../../errors.js';
import { formatStatusTable, gatherStatus } from '../../runner/watch/status-view.js';
import { type Command, EXIT } from '../command.js';

export const statusCommand: Command = {
  name: 'status',
  summary: 'Show what watch is doing for each instance (state, current and last tick, next wake, restarts).',
  usage: 'status [name] [--json]',
  async run(args) {
    const json = args.includes('--json');
    const rest = args.filter((a) => a !== '--json');
    if (rest.length > 1 || rest.some((a) => a.startsWith('-'))) throw new KernelError('USAGE', 'usage: kernel-runner status [name] [--json]');
    const rows = await gatherStatus(rest[0]);
    if (json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
    else if (rows.length === 0) process.stdout.write('No instances yet. Create one with: kernel-runner init <name> <dir>\n');
    else process.stdout.write(formatStatusTable(rows) + '\n');
    return EXIT.OK;
  },
};
