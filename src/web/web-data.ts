import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { type Instance, resolveInstance } from '../config/instance.js';
import { loadRegistry } from '../config/registry.js';
import { describeError } from '../errors.js';
import { readEvents } from '../observe/events/event-log.js';
import { parseRecordingName } from '../observe/recording.js';
import { parseState } from '../config/runner-state.js';
import { type StatusRow, gatherStatus } from '../runner/watch/status-view.js';
import { statusRow } from '../observe/tty-status.js';
import { listUntrusted, readUntrustedRange } from '../util/untrusted-fs.js';

/**
 * What the web view shows, read from files and the watch status API. Files in the data
 * directory are the agent's to write: they are read without following links, capped, and
 * parsed; nothing read here is trusted as markup (the page renders it as text).
 */

const JSON_FILE_MAX = 4 * 1024 * 1024;

/** A host-private JSON file (state.json, a terminal's status); undefined when missing or torn. */
async function readJsonSafely(file: string): Promise<unknown> {
  const read = await readUntrustedRange(path.dirname(file), path.basename(file), { maxBytes: JSON_FILE_MAX });
  if (!read) return undefined;
  try {
    return JSON.parse(read.data.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

export interface InstanceSummary {
  name: string;
  dataDir: string;
  watch: { pid: number; state: string } | undefined;
  state: string;
  paused: boolean;
  reason?: string;
  currentTick?: { number?: number; started: string; trigger?: string };
  lastTick?: { number?: number; status: string; ended?: string; error?: string };
  nextWake?: string;
  context?: { used: number; window: number };
  inboxWaiting: number;
  error?: string;
}

/** Messages waiting in the data directory's inbox (the agent's folder: listed without following links). */
async function countInbox(dataDir: string): Promise<number> {
  const names = (await listUntrusted(dataDir, 'inbox')) ?? [];
  return names.filter((e) => e.kind === 'file' && !e.name.startsWith('.')).length;
}

async function summarize(row: StatusRow): Promise<InstanceSummary> {
  const live = row.live;
  const summary: InstanceSummary = {
    name: row.name,
    dataDir: row.dataDir,
    watch: live ? { pid: live.watchPid, state: live.state } : undefined,
    state: row.state,
    paused: live ? live.paused : row.state === 'paused',
    inboxWaiting: live ? live.pendingMessages : 0,
    ...(row.reason ? { reason: row.reason } : {}),
  };
  if (live?.nextWake) summary.nextWake = `${live.nextWake.time} (${live.nextWake.reason})`;
  if (live?.currentTick) summary.currentTick = { ...(live.currentTick.number === undefined ? {} : { number: live.currentTick.number }), started: live.currentTick.started, trigger: live.currentTick.trigger };
  if (live?.lastResult) {
    summary.lastTick = { status: live.lastResult.status, ended: live.lastResult.ended, ...(live.lastResult.tick === undefined ? {} : { number: live.lastResult.tick }), ...(live.lastResult.error ? { error: live.lastResult.error } : {}) };
  }
  try {
    const instance = await resolveInstance(row.name);
    const state = parseState(await readJsonSafely(instance.paths.state), instance.paths.state);
    if (!summary.currentTick && state.current) summary.currentTick = { number: state.current.tick, started: state.current.started };
    if (!summary.lastTick && state.last) {
      summary.lastTick = { number: state.last.tick, status: state.last.status, ...(state.last.error ? { error: state.last.error } : {}) };
    }
    const tokens = (state.current ?? state.last)?.tokens;
    if (tokens && tokens.context_window > 0) summary.context = { used: tokens.context_used, window: tokens.context_window };
    if (!live) summary.inboxWaiting = await countInbox(instance.paths.root);
  } catch (error) {
    summary.error = describeError(error);
  }
  return summary;
}

export async function listInstances(): Promise<InstanceSummary[]> {
  const rows = await gatherStatus(undefined);
  return Promise.all(rows.map((row) => summarize(row)));
}

/** A registered instance by name (never a path: the page names instances, not directories). */
export async function instanceByName(name: string): Promise<Instance | undefined> {
  const registry = await loadRegistry();
  if (!Object.hasOwn(registry.instances, name)) return undefined;
  return resolveInstance(name);
}

export interface TerminalSummary {
  tty: number;
  command: string;
  program: string;
  state: string;
  lastCommand?: string;
  lastExitCode?: number;
  recording?: string;
}

export interface RecordingInfo {
  file: string;
  tty: number;
  tick: number;
  part: number;
  size: number;
}

export async function listRecordings(instance: Instance): Promise<RecordingInfo[]> {
  const entries = await readdir(instance.paths.recordings, { withFileTypes: true }).catch(() => []);
  const out: RecordingInfo[] = [];
  for (const entry of entries) {
    const parsed = entry.isFile() ? parseRecordingName(entry.name) : undefined;
    if (!parsed) continue;
    const read = await readUntrustedRange(instance.paths.recordings, entry.name, { maxBytes: 0 });
    if (read) out.push({ file: entry.name, ...parsed, size: read.size });
  }
  return out.sort((a, b) => b.tick - a.tick || a.tty - b.tty || b.part - a.part);
}

/** The instance's terminals: the status files, the last command of each from the events, and its newest recording. */
export async function listTerminals(instance: Instance): Promise<TerminalSummary[]> {
  // Real directories only: a link planted in the data directory could point anywhere.
  const names = (await readdir(instance.paths.sessions, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory()).map((e) => e.name);
  const recordings = await listRecordings(instance);
  const { events } = await readEvents(instance.paths.events);
  const out: TerminalSummary[] = [];
  for (const name of names) {
    const match = /^tty_(\d{1,2})$/.exec(name);
    if (!match) continue;
    const tty = Number(match[1]);
    const row = statusRow(await readJsonSafely(path.join(instance.paths.sessions, name, 'status')));
    if (!row) continue;
    const summary: TerminalSummary = { tty, command: row.command, program: row.program, state: row.state };
    const finished = events.findLast((e) => e.type === 'command.finished' && e.tty === tty);
    if (finished?.type === 'command.finished') {
      if (finished.command !== undefined) summary.lastCommand = finished.command;
      if (finished.exitCode !== undefined) summary.lastExitCode = finished.exitCode;
    }
    const recording = recordings.find((r) => r.tty === tty);
    if (recording) summary.recording = recording.file;
    out.push(summary);
  }
  return out.sort((a, b) => a.tty - b.tty);
}

export interface TickRow {
  tick: number;
  started: string;
  durationMs?: number;
  status: string;
  errorClass?: string;
  error?: string;
  attempts?: number;
  context?: { used: number; window: number };
  costUsd?: number;
}

export async function listTicks(instance: Instance): Promise<TickRow[]> {
  const state = parseState(await readJsonSafely(instance.paths.state), instance.paths.state);
  const records = [...state.history, ...(state.current ? [state.current] : [])];
  return records
    .map((r) => ({
      tick: r.tick,
      started: r.started,
      status: r.status,
      ...(r.duration_ms === undefined ? {} : { durationMs: r.duration_ms }),
      ...(r.error_class ? { errorClass: r.error_class } : {}),
      ...(r.error ? { error: r.error } : {}),
      ...(r.attempts === undefined ? {} : { attempts: r.attempts }),
      ...(r.tokens && r.tokens.context_window > 0 ? { context: { used: r.tokens.context_used, window: r.tokens.context_window } } : {}),
      ...(r.cost_usd === undefined ? {} : { costUsd: r.cost_usd }),
    }))
    .sort((a, b) => b.tick - a.tick);
}

/** The newest recording of one terminal, or undefined. */
export async function currentRecording(instance: Instance, tty: number): Promise<string | undefined> {
  const found = (await listRecordings(instance)).find((r) => r.tty === tty);
  return found && path.join(instance.paths.recordings, found.file);
}

/** Pure: the command markers of a recording (`$ cmd` and `exit N`), with their times. */
export function recordingMarkers(cast: string): Array<{ time: number; label: string }> {
  const out: Array<{ time: number; label: string }> = [];
  for (const line of cast.split('\n').slice(1)) {
    if (!line.includes('"m"')) continue;
    try {
      const event = JSON.parse(line) as unknown;
      if (Array.isArray(event) && event[1] === 'm' && typeof event[0] === 'number' && typeof event[2] === 'string') out.push({ time: event[0], label: event[2] });
    } catch {
      // A torn last line: skip it.
    }
  }
  return out;
}
