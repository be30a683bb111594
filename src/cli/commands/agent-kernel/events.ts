import { resolveInstance } from '../../../config/instance.js';
import { followEvents, readEvents } from '../../../observe/events/event-log.js';
import type { InstanceEvent } from '../../../observe/events/event-schema.js';
import { parseCommandArgs, usageError } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

const USAGE = 'events <name-or-dir> [--follow] [--type TYPE]... [--tail N]';

/** Write one line; resolves when stdout took it (a slow `| jq` must not grow our memory). */
function writeLine(event: InstanceEvent): Promise<void> {
  const line = `${JSON.stringify(event)}\n`;
  return new Promise((resolve) => {
    if (out(line)) resolve();
    else process.stdout.once('drain', resolve);
  });
}

export const eventsCommand: Command = {
  name: 'events',
  summary: "Print an instance's events as JSON lines (commands, terminals, ticks, messages); --follow keeps printing.",
  usage: USAGE,
  options: [
    ["--follow, -f", "keep printing new events"],
    ["--type TYPE", "only events of this kind (tick, tty, command.finished...); repeatable"],
    ["--tail N", "start from the last N"],
  ],
  examples: [
    "agent-kernel events demo --tail 20",
    "agent-kernel events demo --follow --type tick",
  ],
  async run(args) {
    const usage = `agent-kernel ${USAGE}`;
    const parsed = parseCommandArgs(args, {
      usage,
      options: { follow: { type: 'boolean', short: 'f' }, type: { type: 'string', multiple: true }, tail: { type: 'string' } },
      positionals: { min: 1, max: 1 },
      missing: 'Name one instance.',
    });
    const target = parsed.positionals[0] as string;
    const tail = parsed.values.tail === undefined ? undefined : Number(parsed.values.tail);
    if (tail !== undefined && (!Number.isInteger(tail) || tail < 0)) throw usageError(usage, `--tail wants a count of events, such as 20; got ${JSON.stringify(parsed.values.tail)}.`);
    const types = parsed.values.type;
    const wanted = (event: InstanceEvent) => !types || types.some((t) => event.type === t || event.type.startsWith(`${t}.`));
    const instance = await resolveInstance(target);
    const { events, offset } = await readEvents(instance.paths.events);
    const past = events.filter(wanted);
    for (const event of tail === undefined ? past : past.slice(Math.max(0, past.length - tail))) await writeLine(event);
    if (!parsed.values.follow) return EXIT.OK;
    const stop = new AbortController();
    const end = () => stop.abort();
    process.once('SIGINT', end);
    process.once('SIGTERM', end);
    process.stdout.once('error', end);
    let writing = Promise.resolve();
    await followEvents(instance.paths.events, offset, (event) => {
      if (wanted(event)) writing = writing.then(() => writeLine(event));
    }, stop.signal);
    await writing;
    return EXIT.OK;
  },
};
