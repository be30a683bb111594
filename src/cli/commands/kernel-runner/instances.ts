import { listInstances, type InstanceSummary } from '../../../runner/instances/instances.js';
import { describeLastTick } from '../../../runner/watch/service/status-view.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

function state(summary: InstanceSummary): string {
  if (summary.problem) return `error: ${summary.problem}`;
  if (summary.paused) return `paused: ${summary.paused}`;
  if (summary.running) return `running tick ${summary.running.tick}`;
  if (summary.suspended) return `suspended since ${summary.suspended.at} (snapshot ${summary.suspended.snapshot})`;
  return 'ready';
}

function lastTick(summary: InstanceSummary): string {
  return summary.last ? describeLastTick(summary.last) : '-';
}

export function formatInstanceTable(summaries: readonly InstanceSummary[]): string {
  const rows = [['NAME', 'DIR', 'STATE', 'LAST TICK'], ...summaries.map((s) => [s.name, s.dir, state(s), lastTick(s)])];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return rows.map((row) => row.map((cell, i) => (i < 3 ? cell.padEnd(widths[i] ?? 0) : cell)).join('  ')).join('\n');
}

export const instancesCommand: Command = {
  name: 'ls',
  summary: 'List registered instances: directory, paused or running, last tick.',
  usage: 'ls [--json]',
  options: [
    ["--json", "as JSON"],
  ],
  examples: [
    "kernel-runner ls",
  ],
  async run(args) {
    const json = parseCommandArgs(args, { usage: 'kernel-runner ls [--json]', options: { json: { type: 'boolean', default: false } } }).values.json;
    const summaries = await listInstances();
    if (json) out(JSON.stringify(summaries, null, 2) + '\n');
    else if (summaries.length === 0) out('No instances yet. Create one with: kernel-runner init <name> <dir>\n');
    else out(formatInstanceTable(summaries) + '\n');
    return EXIT.OK;
  },
};
