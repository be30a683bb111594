import { type WatchPlaces, findRemovalTarget, instanceInUse, removeInstance } from '../../../runner/instances/instance-removal.js';
import { queryStatusSocket, statusSocketPath } from '../../../runner/watch/service/status-api.js';
import { unitPath } from '../../../runner/watch/service/systemd.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, out, err } from '../command.js';

const USAGE = 'rm <name-or-dir> [--data]';

export const removeCommand: Command = {
  name: 'rm',
  summary: "Remove an instance: its container, images and egress proxy, state (logs, transcripts, recordings), operator's file, secrets and name; its data directory only with --data.",
  usage: USAGE,
  options: [
    ["--data", "remove the data directory too"],
  ],
  examples: [
    "kernel-runner rm scout",
    "kernel-runner rm scout --data",
  ],
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, {
      usage: `kernel-runner ${USAGE}`,
      options: { data: { type: 'boolean', default: false } },
      positionals: { min: 1, max: 1 },
      missing: 'Name an instance.',
    });
    const target = await findRemovalTarget(positionals[0] as string);
    const socket = statusSocketPath(target.name);
    const watch: WatchPlaces = {
      socket,
      answers: async () => (await queryStatusSocket(socket, '/v1/health', 1000).catch(() => undefined))?.status === 200,
      unit: unitPath(target.name),
    };
    const busy = await instanceInUse(target, watch);
    if (busy.length > 0) {
      err(`kernel-runner rm: ${target.name} is in use, nothing removed:\n${busy.map((line) => `  ${line}\n`).join('')}`);
      return EXIT.NOT_READY;
    }
    const report = await removeInstance(target, { data: values.data, watchSocket: socket });
    out(
      `Removed ${target.name}:\n${report.removed.map((line) => `  ${line}\n`).join('') || '  nothing was left\n'}` +
        (report.kept.length ? `Kept:\n${report.kept.map((line) => `  ${line}\n`).join('')}` : ''),
    );
    return EXIT.OK;
  },
};
