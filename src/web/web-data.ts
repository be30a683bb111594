import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { type Instance, resolveInstance } from '../config/instance.js';
import { loadRegistry } from '../config/registry.js';
import { describeError } from '../errors.js';
import { parseCastEvent, parseCastHeader, parseRecordingName } from '../observe/recording.js';
import { loadState } from '../state/runner-state.js';
import { countWaiting } from '../mail/mail-queue.js';
import { readUntrustedRange, readUntrustedTail } from '../util/untrusted-fs.js';
import { resultWords } from './transcript.js';

/**
 * What the web view shows, read from files and the watch status API. Files in the data
 * directory are the agent's to write: they are read without following links, capped, and
 * parsed; nothing read here is trusted as markup (the page renders it as text).
 */

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
  /** The instance's kernel: "ready, up 2h 5m, 3 ttys, 96 MB" (status-view.ts describeKernel). */
  kernel?: string;
  error?: string;
}

/**
 * What the web view needs of an instance's status: a row of `kernel-runner status`
 * (runner/watch/service/status-view.ts gatherStatus), handed in by the command that starts the
 * view, so web/ reads the runner's answer without importing runner/ (its folder direction).
 */
export interface StatusRow {
  name: string;
  dataDir: string;
  state: string;
  reason?: string;
  /** The row's own next wake (a retry's next try while the tick's retry policy works), before the watch's. */
  nextWake?: string;
  kernel?: string;
  live?: {
    watchPid: number;
    state: string;
    paused: boolean;
    pendingMessages: number;
    currentTick?: { number?: number; started: string; trigger: string };
    lastResult?: { tick?: number; status: string; ended: string; error?: string };
    nextWake?: { time: string; reason: string };
  };
}

/** Every registered instance's status row (the CLI passes the runner's gatherStatus). */
export type StatusSource = () => Promise<StatusRow[]>;

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
    ...(row.kernel ? { kernel: row.kernel } : {}),
  };
  if (row.nextWake) summary.nextWake = row.nextWake;
  else if (live?.nextWake) summary.nextWake = `${live.nextWake.time} (${live.nextWake.reason})`;
  if (live?.currentTick) summary.currentTick = { ...(live.currentTick.number === undefined ? {} : { number: live.currentTick.number }), started: live.currentTick.started, trigger: live.currentTick.trigger };
  if (live?.lastResult) {
    summary.lastTick = { status: live.lastResult.status, ended: live.lastResult.ended, ...(live.lastResult.tick === undefined ? {} : { number: live.lastResult.tick }), ...(live.lastResult.error ? { error: live.lastResult.error } : {}) };
  }
  try {
    const instance = await resolveInstance(row.name);
    const state = await loadState(instance.paths.state);
    if (!summary.currentTick && state.current) summary.currentTick = { number: state.current.tick, started: state.current.started };
    if (!summary.lastTick && state.last) {
      summary.lastTick = { number: state.last.tick, status: state.last.status, ...(state.last.error ? { error: state.last.error } : {}) };
    }
    const tokens = (state.current ?? state.last)?.tokens;
    if (tokens && tokens.context_window > 0) summary.context = { used: tokens.context_used, window: tokens.context_window };
    // No watch to ask: count what waits for the model, as watch does (queued mail and inbox notes).
    if (!live) summary.inboxWaiting = await countWaiting(instance.paths);
  } catch (error) {
    summary.error = describeError(error);
  }
  return summary;
}

export async function listInstances(status: StatusSource): Promise<InstanceSummary[]> {
  const rows = await status();
  return Promise.all(rows.map((row) => summarize(row)));
}

/** A registered instance by name (never a path: the page names instances, not directories). */
export async function instanceByName(name: string): Promise<Instance | undefined> {
  const registry = await loadRegistry();
  if (!Object.hasOwn(registry.instances, name)) return undefined;
  return resolveInstance(name);
}

/** The names of the instances registered on this host, for a page that names one that is not. */
export async function registeredNames(): Promise<string[]> {
  return Object.keys((await loadRegistry()).instances).sort();
}

export interface RecordingInfo {
  file: string;
  tty: number;
  tick: number;
  /** Made while no tick ran, after tick `tick` (`tty_N-between-NNN.cast`). */
  between: boolean;
  part: number;
  size: number;
  /** ISO time the recording began. */
  started?: string;
  /** Seconds from its start to its last event. */
  durationS: number;
  cols?: number;
  rows?: number;
  /** Commands typed (their markers), first ones first. */
  commands: string[];
  commandCount: number;
}

interface ScanState {
  size: number;
  offset: number;
  header?: { started?: string; cols: number; rows: number };
  lastTime: number;
  commands: string[];
  commandCount: number;
}

/** Recordings only grow: each is read once, then from where the last look stopped. */
const scans = new Map<string, ScanState>();
const SCAN_CHUNK = 4 * 1024 * 1024;
const COMMANDS_KEPT = 8;

async function scanRecording(dir: string, name: string): Promise<ScanState | undefined> {
  const key = path.join(dir, name);
  let state = scans.get(key) ?? { size: 0, offset: 0, lastTime: 0, commands: [], commandCount: 0 };
  for (;;) {
    const chunk = await readUntrustedRange(dir, name, { from: state.offset, maxBytes: SCAN_CHUNK });
    if (!chunk) return undefined;
    if (chunk.size < state.offset) state = { size: 0, offset: 0, lastTime: 0, commands: [], commandCount: 0 };
    state.size = chunk.size;
    const end = chunk.data.lastIndexOf(0x0a) + 1;
    if (end === 0) break;
    for (const line of chunk.data.subarray(0, end).toString('utf8').split('\n')) {
      if (!state.header && state.offset === 0) {
        const header = parseCastHeader(line);
        if (header) state.header = { cols: header.cols, rows: header.rows, ...(header.timestamp ? { started: new Date(header.timestamp * 1000).toISOString() } : {}) };
        state.offset = -1;
        continue;
      }
      const event = parseCastEvent(line);
      if (!event) continue;
      state.lastTime = Math.max(state.lastTime, event.time);
      if (event.code === 'm' && event.data.startsWith('$ ')) {
        state.commandCount++;
        if (state.commands.length < COMMANDS_KEPT) state.commands.push(event.data.slice(2));
      }
    }
    state.offset = Math.max(0, state.offset) + end;
    if (end < chunk.data.length || chunk.data.length < SCAN_CHUNK) break;
  }
  if (scans.size > 5000) scans.clear();
  scans.set(key, state);
  return state;
}

export async function listRecordings(instance: Instance): Promise<RecordingInfo[]> {
  const entries = await readdir(instance.paths.recordings, { withFileTypes: true }).catch(() => []);
  const out: RecordingInfo[] = [];
  for (const entry of entries) {
    const parsed = entry.isFile() ? parseRecordingName(entry.name) : undefined;
    if (!parsed) continue;
    const scan = await scanRecording(instance.paths.recordings, entry.name);
    if (!scan) continue;
    out.push({
      file: entry.name,
      ...parsed,
      size: scan.size,
      ...(scan.header?.started ? { started: scan.header.started } : {}),
      ...(scan.header ? { cols: scan.header.cols, rows: scan.header.rows } : {}),
      durationS: scan.lastTime,
      commands: scan.commands,
      commandCount: scan.commandCount,
    });
  }
  return out.sort(newestFirst);
}

/** Pure: recordings newest first by the time each began (a tick's parts and TTYs interleave as they happened). */
export function newestFirst(a: RecordingInfo, b: RecordingInfo): number {
  const at = (r: RecordingInfo) => (r.started === undefined ? Number.NaN : Date.parse(r.started));
  const [ta, tb] = [at(a), at(b)];
  if (!Number.isNaN(ta) && !Number.isNaN(tb) && ta !== tb) return tb - ta;
  return b.tick - a.tick || b.part - a.part || a.tty - b.tty;
}

export interface TickRow {
  tick: number;
  started: string;
  durationMs?: number;
  status: string;
  trigger?: string;
  /** One line: the agent's last words, or what went wrong. */
  result?: string;
  errorClass?: string;
  error?: string;
  attempts?: number;
  tokens?: { input: number; output: number; cacheRead: number; cacheCreation: number };
  context?: { used: number; window: number };
  costUsd?: number;
}

/** The tick's outcome line from the end of its transcript (its last result), cached by size. */
const resultLines = new Map<string, { size: number; line?: string; trigger?: string }>();

async function transcriptFacts(instance: Instance, tick: number): Promise<{ line?: string; trigger?: string }> {
  const file = instance.paths.tickLog(tick);
  const info = await readUntrustedRange(path.dirname(file), path.basename(file), { maxBytes: 0 });
  if (!info) return {};
  const cached = resultLines.get(file);
  if (cached && cached.size === info.size) return cached;
  const head = await readUntrustedRange(path.dirname(file), path.basename(file), { maxBytes: 4096 });
  const trigger = /"event":"tick-start","trigger":"([a-z-]+)"/.exec(head?.data.toString('utf8') ?? '')?.[1];
  const tail = (await readUntrustedTail(path.dirname(file), path.basename(file), 64 * 1024)) ?? '';
  let line: string | undefined;
  for (const text of tail.split('\n').reverse()) {
    if (!text.includes('"type":"result"')) continue;
    try {
      const event = JSON.parse(text) as Record<string, unknown>;
      const result = resultWords(event);
      line = result.split('\n').find((l) => l.trim())?.trim().slice(0, 200);
      break;
    } catch {
      // A torn line: look further up.
    }
  }
  const facts = { size: info.size, ...(line ? { line } : {}), ...(trigger ? { trigger } : {}) };
  resultLines.set(file, facts);
  return facts;
}

export async function listTicks(instance: Instance, triggers: ReadonlyMap<number, string> = new Map()): Promise<TickRow[]> {
  const state = await loadState(instance.paths.state);
  const records = [...state.history.filter((r) => r.tick !== state.current?.tick), ...(state.current ? [state.current] : [])];
  const rows: TickRow[] = [];
  for (const r of records) {
    const facts = await transcriptFacts(instance, r.tick);
    const trigger = facts.trigger ?? triggers.get(r.tick);
    const t = r.tokens;
    rows.push({
      tick: r.tick,
      started: r.started,
      status: r.status,
      ...(r.duration_ms === undefined ? {} : { durationMs: r.duration_ms }),
      ...(trigger ? { trigger } : {}),
      ...(facts.line ? { result: facts.line } : {}),
      ...(r.error_class ? { errorClass: r.error_class } : {}),
      ...(r.error ? { error: r.error } : {}),
      ...(r.attempts === undefined ? {} : { attempts: r.attempts }),
      ...(t && t.input + t.output + t.cache_read + t.cache_creation > 0 ? { tokens: { input: t.input, output: t.output, cacheRead: t.cache_read, cacheCreation: t.cache_creation } } : {}),
      // A tick that never reached the model has no context to show (not "0k of 1000k").
      ...(t && t.context_window > 0 && t.context_used > 0 ? { context: { used: t.context_used, window: t.context_window } } : {}),
      ...(r.cost_usd === undefined || (r.cost_usd === 0 && r.status !== 'ok') ? {} : { costUsd: r.cost_usd }),
    });
  }
  return rows.sort((a, b) => b.tick - a.tick);
}

/** A command of a recording, as the replay lists it. */
export interface RecordedCommand {
  /** Its marker's number among the recording's markers (the player seeks by it). */
  marker: number;
  /** Seconds into the replay, as the player counts them (pauses cut to the idle limit). */
  time: number;
  command: string;
  /** As the shell reported it ("0", "127", "?"); absent when the recording ends first. */
  exitCode?: string;
  /** How long it ran, from the shell's own report. */
  durationMs?: number;
  /** Seconds into the replay when it ended (its exit marker), on the player's clock. */
  endTime?: number;
}

/** The replay's idle limit (views: asciinema-player's idleTimeLimit): longer pauses are cut to it. */
export const REPLAY_IDLE_LIMIT_S = 2;

/**
 * Pure: a recording's commands (`$ cmd` markers, each with the `exit N after M ms` marker that
 * ends it) and its length, on the player's clock: every pause longer than the idle limit counts
 * as the limit, as asciinema-player plays it.
 */
export function recordingCommands(cast: string, idleLimit = REPLAY_IDLE_LIMIT_S): { durationS: number; recordedS: number; commands: RecordedCommand[] } {
  const commands: RecordedCommand[] = [];
  let marker = 0;
  let last = 0;
  let clock = 0;
  let open: RecordedCommand | undefined;
  for (const line of cast.split('\n').slice(1)) {
    // A torn last line parses to nothing: skipped.
    const event = parseCastEvent(line);
    if (!event) continue;
    clock += Math.min(Math.max(0, event.time - last), idleLimit);
    last = Math.max(last, event.time);
    if (event.code !== 'm') continue;
    const index = marker++;
    if (event.data.startsWith('$ ')) {
      open = { marker: index, time: Math.round(clock * 1000) / 1000, command: event.data.slice(2) };
      commands.push(open);
      continue;
    }
    const exit = /^exit (\S+)(?: after (\d+) ms)?$/.exec(event.data);
    if (exit && open) {
      open.exitCode = exit[1]!;
      open.endTime = Math.round(clock * 1000) / 1000;
      if (exit[2] !== undefined) open.durationMs = Number(exit[2]);
      open = undefined;
    }
  }
  return { durationS: Math.round(clock * 1000) / 1000, recordedS: last, commands };
}
