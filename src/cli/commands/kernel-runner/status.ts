import { formatStatusTable, gatherStatus } from '../../../runner/watch/service/status-view.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

export const statusCommand: Command = {
  name: 'status',
  summary: 'Show what watch is doing for each instance (state, current and last tick, next wake, restarts).',
  usage: 'status [name] [--json]',
  options: [
    ["--json", "as JSON (with the retry state: attempt, cause, next try)"],
  ],
  examples: [
    "kernel-runner status",
    "kernel-runner status scout --json",
  ],
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, {
      usage: 'kernel-runner status [name] [--json]',
      options: { json: { type: 'boolean', default: false } },
      positionals: { max: 1 },
    });
    const json = values.json;
    const rows = await gatherStatus(positionals[0]);
    if (json) out(JSON.stringify(rows, null, 2) + '\n');
    else if (rows.length === 0) out('No instances yet. Create one with: kernel-runner init <name> <dir>\n');
    else out(formatStatusTable(rows, process.stdout.isTTY && process.stdout.columns ? { width: process.stdout.columns } : {}) + '\n');
    return EXIT.OK;
  },
};
