import { resolveInstance } from '../../../config/instance.js';
import { LogFollower, formatLogLine } from '../../../log/log-reader.js';
import { sleep } from '../../../util/sleep.js';
import { parseCommandArgs, usageError } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

const USAGE = 'logs <name-or-dir> [-f|--follow] [-n|--lines N]';
const FOLLOW_POLL_MS = 500;

export const logsCommand: Command = {
  name: 'logs',
  summary: "Print an instance's logs (its watch, ticks, kernel and server) for people: local time, level, process, message, key fields; -f keeps printing.",
  usage: USAGE,
  options: [
    ['--follow, -f', 'keep printing new lines (Ctrl-C stops)'],
    ['--lines N, -n N', 'how many of the last lines first (default 50)'],
  ],
  examples: ['kernel-runner logs scout', 'kernel-runner logs -f scout', 'kernel-runner logs scout -n 200 | less'],
  async run(args) {
    const usage = `kernel-runner ${USAGE}`;
    const { values, positionals } = parseCommandArgs(args, {
      usage,
      options: { follow: { type: 'boolean', short: 'f', default: false }, lines: { type: 'string', short: 'n' } },
      positionals: { min: 1, max: 1 },
      missing: 'Name an instance.',
    });
    const count = values.lines === undefined ? 50 : Number(values.lines);
    if (!Number.isInteger(count) || count < 0) throw usageError(usage, `--lines wants a whole number, such as 100; got ${JSON.stringify(values.lines)}.`);
    const instance = await resolveInstance(positionals[0]!);
    // No colour: out() shows every control character as an escape (formatPretty escaped the agent's text already).
    const color = false;
    const follower = new LogFollower(instance.paths.logs);
    const first = await follower.last(count);
    if (first.length === 0 && !values.follow) out(`No log lines yet in ${instance.paths.logs} (kernel-runner tick ${instance.name} or watch writes them).\n`);
    for (const line of first) out(formatLogLine(line, { color }));
    while (values.follow) {
      await sleep(FOLLOW_POLL_MS);
      for (const line of await follower.next()) out(formatLogLine(line, { color }));
    }
    return EXIT.OK;
  },
};
