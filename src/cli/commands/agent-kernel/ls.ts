import { resolveInstance } from '../../../config/instance.js';
import { formatTtyTable, readTtyStatuses } from '../../../observe/tty-status.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

export const lsCommand: Command = {
  name: 'ls',
  summary: "List an instance's TTYs with program, state and unseen lines.",
  usage: 'ls <name-or-dir> [--json]',
  options: [
    ["--json", "the rows as JSON"],
  ],
  examples: [
    "agent-kernel ls demo",
    "agent-kernel ls ~/agent-kernel-demo --json",
  ],
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, {
      usage: 'agent-kernel ls <name-or-dir> [--json]',
      options: { json: { type: 'boolean', default: false } },
      positionals: { min: 1, max: 1 },
      missing: 'Name an instance.',
    });
    const json = values.json;
    const instance = await resolveInstance(positionals[0] as string);
    const rows = await readTtyStatuses(instance.paths.sessions);
    out(json ? `${JSON.stringify(rows, null, 2)}\n` : `${formatTtyTable(rows)}\n`);
    return EXIT.OK;
  },
};
