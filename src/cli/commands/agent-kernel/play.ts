import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { resolveInstance } from '../../../config/instance.js';
import { CodedError } from '../../../errors.js';
import { type CastHeader, parseRecordingName } from '../../../observe/recording.js';
import { readCast, replayDelayMs } from '../../../observe/recording-replay.js';
import { TerminalOutputFilter } from '../../../util/terminal-filter.js';
import { parseCommandArgs, usageError } from '../args.js';
import { listRecordings, type RecordingInfo } from '../../../web/web-data.js';
import { type Command, EXIT, err, out } from '../command.js';

const USAGE = 'play <recording.cast> | play <name-or-dir> <tty_N-tick-NNN.cast> [--speed N] [--idle-limit SECONDS] [--instant] | play <name-or-dir> --list';

/** Write raw bytes, waiting while stdout is full (a slow terminal or pipe must not grow our memory). */
function write(bytes: Buffer): Promise<void> {
  if (bytes.length === 0) return Promise.resolve();
  return new Promise((resolve) => {
    if (process.stdout.write(bytes)) resolve();
    else process.stdout.once('drain', resolve);
  });
}

/**
 * Replay a terminal recording in this terminal, through the filter `attach` uses: what the
 * agent printed can colour and move the cursor, but not write the clipboard (OSC 52), set the
 * title, plant links (OSC 8), or send DCS, APC, PM, SOS or window operations to the person's
 * terminal, as a raw `asciinema play` would.
 */
export const playCommand: Command = {
  name: 'play',
  summary: 'Replay a terminal recording (.cast) here, through the same filter as attach (no clipboard writes, titles, links or DCS).',
  usage: USAGE,
  options: [
    ["--list", "list the instance's recordings (newest last) instead of playing one"],
    ["--speed N", "play N times faster"],
    ["--idle-limit SECONDS", "cap pauses (default 2)"],
    ["--instant", "write it all at once"],
  ],
  examples: [
    "agent-kernel play demo --list",
    "agent-kernel play demo tty_0-tick-001.cast --speed 4",
    "agent-kernel play ~/rec/tty_3-tick-004.cast --instant | less -R",
  ],
  async run(args) {
    const usage = `agent-kernel ${USAGE}`;
    const { values, positionals } = parseCommandArgs(args, {
      usage,
      options: { speed: { type: 'string' }, 'idle-limit': { type: 'string' }, instant: { type: 'boolean' }, list: { type: 'boolean' } },
      positionals: { min: 1, max: 2 },
      missing: 'Name a recording: a .cast file, or an instance and the name of one of its recordings.',
    });
    if (values.list) {
      if (positionals.length !== 1) throw usageError(usage, '--list takes an instance only.');
      out(formatRecordingList(await listRecordings(await resolveInstance(positionals[0]!))));
      return EXIT.OK;
    }
    const speed = values.speed === undefined ? 1 : Number(values.speed);
    if (!(speed > 0) || !Number.isFinite(speed)) throw usageError(usage, `--speed wants a number above 0, such as 2; got ${JSON.stringify(values.speed)}.`);
    const idleLimit = values['idle-limit'] === undefined ? 2 : Number(values['idle-limit']);
    if (!(idleLimit >= 0) || !Number.isFinite(idleLimit)) throw usageError(usage, `--idle-limit wants seconds, such as 2; got ${JSON.stringify(values['idle-limit'])}.`);
    const file = await recordingFile(positionals);

    const filter = new TerminalOutputFilter();
    let previous = 0;
    let header: CastHeader | undefined;
    try {
      for await (const item of readCast(file)) {
        if (!('code' in item)) {
          header = item;
          const size = `${header.cols}x${header.rows}`;
          const here = process.stdout.isTTY ? `${process.stdout.columns}x${process.stdout.rows}` : undefined;
          err(`Replaying ${path.basename(file)} (${size}${here && here !== size ? `; this terminal is ${here}` : ''}) through the attach filter. Ctrl-C stops.\n`);
          continue;
        }
        if (item.code !== 'o') continue;
        if (!values.instant) {
          const delay = replayDelayMs(item.time - previous, { speed, idleLimitSeconds: idleLimit });
          if (delay > 0) await sleep(delay);
        }
        previous = item.time;
        await write(filter.push(Buffer.from(item.data, 'utf8')));
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new CodedError('USAGE', `No recording at ${file}. agent-kernel web lists them (Recordings), or ls <state>/logs/recordings/.`);
      throw error;
    }
    // Leave the person's terminal as it was found: colours off, cursor shown.
    if (process.stdout.isTTY) await write(Buffer.from('\x1b[0m\x1b[?25h'));
    return EXIT.OK;
  },
};

/** A path to a .cast file, or an instance and the name of one of its recordings (never a path inside it). */
async function recordingFile(positionals: string[]): Promise<string> {
  const [first, second] = positionals as [string, string | undefined];
  if (second === undefined) return path.resolve(first);
  if (!parseRecordingName(second)) throw new CodedError('USAGE', `${JSON.stringify(second)} is not a recording name; they look like tty_0-tick-003.cast.`);
  const instance = await resolveInstance(first);
  return path.join(instance.paths.recordings, second);
}

/** Pure: an instance's recordings as a table, oldest first, each with what to type to play it. */
export function formatRecordingList(recordings: readonly RecordingInfo[]): string {
  if (recordings.length === 0) return 'No recordings yet: each terminal of each tick is recorded once a tick has used it.\n';
  const rows = [...recordings]
    .sort((a, b) => (a.started ?? '').localeCompare(b.started ?? '') || a.tick - b.tick || Number(a.between) - Number(b.between) || a.tty - b.tty || a.part - b.part)
    .map((r) => [r.file, r.started ? r.started.slice(0, 19).replace('T', ' ') + 'Z' : '-', `${Math.round(r.durationS)}s`, String(r.commandCount), r.commands.slice(0, 3).join('; ').slice(0, 60)]);
  const table = [['RECORDING', 'STARTED', 'LENGTH', 'COMMANDS', 'FIRST COMMANDS'], ...rows];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  return `${table.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n')}\n`;
}
