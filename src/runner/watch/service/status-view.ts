import { resolveInstance } from '../../../config/instance.js';
import { instancePaths } from '../../../config/paths.js';
import { loadRegistry } from '../../../config/registry.js';
import { describeError } from '../../../errors.js';
import { readPaused } from '../../tick/paused.js';
import { type SuspendRecord, readSuspended } from '../../../sandbox/container/suspended.js';
import { type RunnerState, type TickRecord, loadState } from '../../../state/runner-state.js';
import { kernelHealth } from '../../../kernel/client/link.js';
import { kernelSocketPath } from '../../../kernel/socket-path.js';
import type { KernelStatus } from '../../../kernel/supervisor/kernel-supervisor.js';
import { type AgentStatus, queryAgentStatus } from './status-api.js';

/** One row of `kernel-runner status`: from the watch process when one runs, else from the files. */
export interface StatusRow {
  name: string;
  dataDir: string;
  /** The watch process's PID, when one answered on the socket. */
  watchPid?: number;
  state: string;
  reason?: string;
  current?: string;
  last?: string;
  nextWake?: string;
  restarts?: number;
  /** The instance's kernel, for people: "ready, up 2h 5m, 3 ttys, 96 MB". */
  kernel?: string;
  /** The full answer of the status API, when there was one. */
  live?: AgentStatus;
}

type TickRetryRecord = NonNullable<TickRecord['retry']>;

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours}h ${minutes % 60}m` : `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/** Pure: one line about a kernel, from watch's supervision or from the kernel itself. */
export function describeKernel(kernel: KernelStatus, now = Date.now()): string {
  const parts: string[] = [kernel.state];
  if (kernel.uptimeSeconds !== undefined) parts.push(`up ${duration(kernel.uptimeSeconds)}`);
  if (kernel.terminals !== undefined) parts.push(kernel.terminalsState === 'error' ? `terminals: ${kernel.terminalsError ?? 'error'}` : `${kernel.terminals} tty${kernel.terminals === 1 ? '' : 's'}`);
  if (kernel.rssBytes !== undefined) parts.push(`${Math.round(kernel.rssBytes / 1048576)} MB`);
  if (kernel.lastHeartbeat !== undefined && kernel.state !== 'ready') parts.push(`last heartbeat ${duration(Math.max(0, Math.round((now - Date.parse(kernel.lastHeartbeat)) / 1000)))} ago`);
  if (kernel.restarts > 0) parts.push(`${kernel.restarts} restart${kernel.restarts === 1 ? '' : 's'}`);
  if (kernel.upgradePending) parts.push('upgrade waits for the tick to end');
  if (kernel.reason && kernel.state !== 'ready') parts.push(firstLine(kernel.reason));
  return parts.join(', ');
}

/** A kernel that answers on its socket while no watch does (run by hand, or left by a watch that died). */
async function unwatchedKernel(name: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<KernelStatus | undefined> {
  const health = await kernelHealth(kernelSocketPath(instancePaths(name, dataDir, env).stateRoot, env), 1000).catch(() => undefined);
  if (!health) return undefined;
  return {
    state: health.state === 'ready' ? 'ready' : 'starting',
    pid: health.pid,
    started: health.started,
    uptimeSeconds: health.uptimeSeconds,
    lastHeartbeat: health.now,
    terminals: health.terminals.count,
    terminalsState: health.terminals.state,
    ...(health.terminals.error ? { terminalsError: health.terminals.error } : {}),
    rssBytes: health.rssBytes,
    sessions: health.sessions,
    restarts: 0,
    reason: 'no watch supervises it',
  };
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}

/** Pure: a finished tick as `status` and `ls` both show it: number, outcome, and when it ended. */
export function describeLastTick(record: Pick<TickRecord, 'tick' | 'status' | 'error_class' | 'started' | 'duration_ms'>): string {
  const ended = record.duration_ms === undefined ? undefined : new Date(Date.parse(record.started) + record.duration_ms).toISOString();
  return `#${record.tick} ${record.status}${record.error_class ? ` (${record.error_class})` : ''} ${ended ? `ended ${ended}` : `started ${record.started}`}`;
}

/** Pure: the tick's retry policy at work, in a few words (the reason) and its next try. */
function describeRetry(retry: TickRetryRecord, now: number): { state: string; reason: string; nextWake?: string } {
  const cause = firstLine(retry.cause);
  if (Date.parse(retry.next_at) > now) {
    return { state: 'retrying', reason: `attempt ${retry.attempt} of ${retry.max_attempts} failed: ${cause}; retries end by ${retry.deadline}`, nextWake: `${retry.next_at} (retry ${retry.attempt + 1} of ${retry.max_attempts})` };
  }
  return { state: 'ticking', reason: `attempt ${retry.attempt + 1} of ${retry.max_attempts} runs (attempt ${retry.attempt} failed: ${cause})` };
}

/** Pure: the row of an instance whose watch answered; `recorded` (state.json) tells the ticks before that watch started. */
export function fromLive(status: AgentStatus, recorded: RunnerState | undefined): StatusRow {
  // A watch knows the ticks it ran; the ones before it started are in state.json.
  const last = status.lastResult
    ? `#${status.lastResult.tick ?? '?'} ${status.lastResult.status} ended ${status.lastResult.ended}`
    : recorded?.last
      ? describeLastTick(recorded.last)
      : undefined;
  return {
    name: status.name,
    dataDir: status.dataDir,
    watchPid: status.watchPid,
    state: status.state,
    ...(status.reason ? { reason: firstLine(status.reason) } : {}),
    ...(status.currentTick ? { current: `#${status.currentTick.number ?? '?'} (${status.currentTick.trigger}) since ${status.currentTick.started}` } : {}),
    ...(last ? { last } : {}),
    ...(status.nextWake ? { nextWake: `${status.nextWake.time} (${status.nextWake.reason})` } : {}),
    restarts: status.restarts,
    ...(status.kernel ? { kernel: describeKernel(status.kernel) } : {}),
    live: status,
  };
}

async function fromFiles(name: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<StatusRow> {
  const row: StatusRow = { name, dataDir, state: 'not watched' };
  try {
    const paused = await readPaused(instancePaths(name, dataDir, env));
    if (paused) {
      row.state = 'paused';
      row.reason = firstLine(paused);
    }
    const state = await loadState(instancePaths(name, dataDir, env).state);
    if (state.current) {
      row.current = `#${state.current.tick} since ${state.current.started}${state.current.pid ? ` (PID ${state.current.pid})` : ''}`;
      // A tick run by hand (kernel-runner tick) retries too: its record says how.
      if (state.current.retry && row.state !== 'paused') {
        const retry = describeRetry(state.current.retry, Date.now());
        row.state = retry.state;
        row.reason = retry.reason;
        if (retry.nextWake) row.nextWake = retry.nextWake;
      } else if (row.state === 'not watched') row.state = 'ticking';
    }
    if (state.last) row.last = describeLastTick(state.last);
  } catch (error) {
    row.state = 'error';
    row.reason = firstLine(describeError(error));
  }
  const kernel = await unwatchedKernel(name, dataDir, env);
  if (kernel) row.kernel = `${describeKernel(kernel)} (PID ${kernel.pid})`;
  return row;
}

async function rowFor(name: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<StatusRow> {
  const live = await queryAgentStatus(name, env);
  // No watch process (or a dead socket): read the files.
  const row = live ? fromLive(live, live.lastResult ? undefined : await loadState(instancePaths(name, dataDir, env).state).catch(() => undefined)) : await fromFiles(name, dataDir, env);
  return withSuspended(row, await readSuspended(instancePaths(name, dataDir, env)).catch(() => undefined));
}

/** Pure: an instance with no tick running whose container is saved and removed says so, and what brings it back. */
export function withSuspended(row: StatusRow, suspended: SuspendRecord | undefined): StatusRow {
  if (!suspended || !['idle', 'not watched'].includes(row.state)) return row;
  return { ...row, state: 'suspended', reason: `since ${suspended.at}, its container saved in snapshot ${suspended.snapshot}; a message, a wake or kernel-runner resume ${row.name} brings it back` };
}

/** Rows for one instance (`name` given) or for every registered one. */
export async function gatherStatus(name: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<StatusRow[]> {
  if (name) {
    const instance = await resolveInstance(name, env);
    return [await rowFor(instance.name, instance.dataDir, env)];
  }
  const registry = await loadRegistry(env);
  const entries = Object.entries(registry.instances).sort(([a], [b]) => a.localeCompare(b));
  return Promise.all(entries.map(([n, entry]) => rowFor(n, entry.dir, env)));
}

/** Pure: a time as few characters as tell it: the time of day today (UTC, as every time here), else the date too. */
export function shortTime(iso: string, now: number): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const text = new Date(at).toISOString();
  return text.slice(0, 10) === new Date(now).toISOString().slice(0, 10) ? `${text.slice(11, 19)}Z` : `${text.slice(0, 10)} ${text.slice(11, 16)}Z`;
}

/** Every ISO time in a cell, shortened. */
function shortTimes(text: string, now: number): string {
  return text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, (iso) => shortTime(iso, now));
}

/** Pure: `text` cut into lines of at most `width` characters, at spaces where it can. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let rest = text;
  while (rest.length > width) {
    const space = rest.lastIndexOf(' ', width);
    const cut = space > width / 2 ? space : width;
    lines.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  return [...lines, rest];
}

/**
 * Pure: what `kernel-runner status` prints, as `systemctl status` does: a line an instance (its
 * name, watch and state), then one labelled line a fact (current and last tick, next wake,
 * restarts, kernel, why), times shortened and long text wrapped, so that no line is wider than
 * `width` (100 when not a terminal) and nothing is cut.
 */
export function formatStatusTable(rows: readonly StatusRow[], options: { width?: number; now?: number } = {}): string {
  const width = Math.max(60, options.width ?? 100);
  const now = options.now ?? Date.now();
  const blocks = rows.map((r) => {
    const facts: [string, string | undefined][] = [
      ['current tick', r.current],
      ['last tick', r.last ?? 'none yet'],
      ['next wake', r.nextWake],
      ['restarts', r.restarts ? String(r.restarts) : undefined],
      ['kernel', r.kernel],
      ['why', r.reason],
    ];
    const lines = [`${r.name}: ${r.state}${r.watchPid ? ` (watch pid ${r.watchPid})` : ''}`];
    for (const [label, text] of facts) {
      if (!text) continue;
      const parts = wrap(shortTimes(text, now), width - 16);
      lines.push(...parts.map((part, i) => `  ${(i === 0 ? label : '').padEnd(12)}  ${part}`));
    }
    return lines.join('\n');
  });
  return blocks.join('\n\n');
}
