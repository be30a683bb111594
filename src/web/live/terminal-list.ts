import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Instance } from '../../config/instance.js';
import { readTerminalRegistry } from '../../state/terminal-registry.js';
import type { InstanceEvent } from '../../observe/events/event-schema.js';
import { parseCastHeader, parseRecordingName } from '../../observe/recording.js';
import { type TtyStatusRow, statusRow } from '../../observe/tty-status.js';
import { readTtyStatusFile } from '../../state/tty-status-file.js';
import { readUntrustedRange } from '../../util/untrusted-fs.js';

/** What the events say one terminal is doing, since it was opened (a closed terminal of the same number is forgotten). */
export interface TtyActivity {
  openedAt?: string;
  running?: { command: string; since: string };
  last?: { command?: string; exitCode?: number; durationMs?: number; at: string };
  waiting?: { program: string; at: string };
}

/** Pure: one event applied to the terminals' activity. */
export function applyEvent(activity: Map<number, TtyActivity>, event: InstanceEvent): void {
  if (!('tty' in event) || event.type === 'person.typed') return;
  const tty = event.tty;
  if (event.type === 'tty.opened') {
    activity.set(tty, { openedAt: event.time });
    return;
  }
  if (event.type === 'tty.closed') {
    activity.delete(tty);
    return;
  }
  const now = activity.get(tty) ?? {};
  if (event.type === 'command.started') activity.set(tty, { ...now, running: { command: event.command, since: event.time }, waiting: undefined });
  else if (event.type === 'command.finished') {
    const last = { at: event.time, ...(event.command === undefined ? {} : { command: event.command }), ...(event.exitCode === undefined ? {} : { exitCode: event.exitCode }), ...(event.durationMs === undefined ? {} : { durationMs: event.durationMs }) };
    activity.set(tty, { ...now, running: undefined, waiting: undefined, last });
  } else if (event.type === 'tty.waiting-for-input') activity.set(tty, { ...now, waiting: { program: event.program, at: event.time } });
}

export interface TerminalSummary {
  instance: string;
  tty: number;
  command: string;
  program: string;
  alive: boolean;
  exitCode?: number;
  /** running | waiting | idle | exited */
  state: 'running' | 'waiting' | 'idle' | 'exited';
  /** The command running now, or the program waiting for input. */
  doing?: string;
  since?: string;
  lastCommand?: string;
  lastExitCode?: number;
  lastDurationMs?: number;
  unseen: boolean;
  lastActivity: string;
  openedAt?: string;
  recording?: string;
}

/** Header timestamps of recordings (a header never changes once written). */
const headerTimes = new Map<string, number | undefined>();

async function recordingStart(dir: string, name: string): Promise<number | undefined> {
  const key = path.join(dir, name);
  if (headerTimes.has(key)) return headerTimes.get(key);
  const head = await readUntrustedRange(dir, name, { maxBytes: 4096 });
  const line = head?.data.toString('utf8').split('\n')[0];
  if (!line || !head?.data.includes(0x0a)) return undefined;
  const time = parseCastHeader(line)?.timestamp;
  if (headerTimes.size > 10_000) headerTimes.clear();
  headerTimes.set(key, time);
  return time;
}

/**
 * The recording of the terminal open now: the newest of its number, unless it began before
 * this terminal was opened (then it is a closed terminal's, and this one has printed nothing yet).
 */
async function recordingOf(dir: string, names: string[], tty: number, openedAt: string | undefined): Promise<string | undefined> {
  const newest = names
    .map((name) => ({ name, parsed: parseRecordingName(name) }))
    .filter((r) => r.parsed?.tty === tty)
    // After tick N come the recordings made between it and the next.
    .sort((a, b) => b.parsed!.tick - a.parsed!.tick || Number(b.parsed!.between) - Number(a.parsed!.between) || b.parsed!.part - a.parsed!.part)[0];
  if (!newest) return undefined;
  const opened = openedAt === undefined ? NaN : Date.parse(openedAt) / 1000;
  if (Number.isNaN(opened)) return newest.name;
  const started = await recordingStart(dir, newest.name);
  return started !== undefined && started >= Math.floor(opened) - 1 ? newest.name : undefined;
}

/** The instance's open terminals now, from their status files, the registry, the events and the recordings. */
export async function readTerminals(instance: Instance, activity: Map<number, TtyActivity>): Promise<TerminalSummary[]> {
  const dirs = (await readdir(instance.paths.sessions, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory()).map((e) => e.name);
  // A registry being rewritten or not there yet: the events say when terminals opened.
  const registry = await readTerminalRegistry(instance.paths.terminalRegistry).catch(() => undefined);
  const opened = new Map(registry ? registry.ttys.map((t) => [t.tty, t.openedAt]) : []);
  const recordings = await readdir(instance.paths.recordings).catch(() => [] as string[]);
  const out: TerminalSummary[] = [];
  for (const dir of dirs) {
    const match = /^tty_(\d{1,2})$/.exec(dir);
    if (!match) continue;
    const tty = Number(match[1]);
    const status = await readTtyStatusFile(path.join(instance.paths.sessions, dir));
    if (!status) continue;
    const row = statusRow(status);
    const alive = status.alive;
    const openedAt = opened.get(tty) ?? activity.get(tty)?.openedAt;
    const recording = await recordingOf(instance.paths.recordings, recordings, tty, openedAt);
    out.push(summarize(instance.name, tty, row, alive, activity.get(tty), openedAt, recording));
  }
  return out.sort((a, b) => a.tty - b.tty);
}

function summarize(
  name: string,
  tty: number,
  row: TtyStatusRow,
  alive: boolean,
  activity: TtyActivity | undefined,
  openedAt: string | undefined,
  recording: string | undefined,
): TerminalSummary {
  // What the events say about a terminal opened before: not this one's.
  const own = activity && (openedAt === undefined || activity.openedAt === undefined || activity.openedAt >= openedAt) ? activity : undefined;
  // Waiting until it prints again.
  const waiting = own?.waiting && own.waiting.at >= row.lastActivity ? own.waiting : undefined;
  const exitCode = /\((-?\d+)\)/.exec(row.state)?.[1];
  const state = !alive ? 'exited' : waiting ? 'waiting' : own?.running ? 'running' : 'idle';
  return {
    instance: name,
    tty,
    command: row.command,
    program: row.program,
    alive,
    ...(exitCode === undefined ? {} : { exitCode: Number(exitCode) }),
    state,
    ...(waiting ? { doing: waiting.program, since: waiting.at } : own?.running ? { doing: own.running.command, since: own.running.since } : {}),
    ...(own?.last?.command === undefined ? {} : { lastCommand: own.last.command }),
    ...(own?.last?.exitCode === undefined ? {} : { lastExitCode: own.last.exitCode }),
    ...(own?.last?.durationMs === undefined ? {} : { lastDurationMs: own.last.durationMs }),
    unseen: row.unseen,
    lastActivity: row.lastActivity,
    ...(openedAt === undefined ? {} : { openedAt }),
    ...(recording === undefined ? {} : { recording }),
  };
}
