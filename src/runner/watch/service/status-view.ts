import { resolveInstance } from '../../../config/instance.js';
import { instancePaths } from '../../../config/paths.js';
import { loadRegistry } from '../../../config/registry.js';
import { describeError } from '../../../errors.js';
import { readPaused } from '../../tick/paused.js';
import { loadState } from '../../../state/runner-state.js';
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

function fromLive(status: AgentStatus): StatusRow {
  return {
    name: status.name,
    dataDir: status.dataDir,
    watchPid: status.watchPid,
    state: status.state,
    ...(status.reason ? { reason: firstLine(status.reason) } : {}),
    ...(status.currentTick ? { current: `#${status.currentTick.number ?? '?'} (${status.currentTick.trigger}) since ${status.currentTick.started}` } : {}),
    ...(status.lastResult ? { last: `#${status.lastResult.tick ?? '?'} ${status.lastResult.status} ${status.lastResult.ended}` } : {}),
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
    if (state.current) row.current = `#${state.current.tick} since ${state.current.started}${state.current.pid ? ` (PID ${state.current.pid})` : ''}`;
    if (state.last) row.last = `#${state.last.tick} ${state.last.status}${state.last.error_class ? ` (${state.last.error_class})` : ''} ${state.last.started}`;
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
  return live ? fromLive(live) : fromFiles(name, dataDir, env);
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

/** Pure: the rows as an aligned table. */
export function formatStatusTable(rows: readonly StatusRow[]): string {
  const header = ['NAME', 'WATCH', 'STATE', 'KERNEL', 'CURRENT TICK', 'LAST TICK', 'NEXT WAKE', 'RESTARTS', 'REASON'];
  const cells = rows.map((r) => [
    r.name,
    r.watchPid ? `pid ${r.watchPid}` : '-',
    r.state,
    r.kernel ?? '-',
    r.current ?? '-',
    r.last ?? '-',
    r.nextWake ?? '-',
    r.restarts === undefined ? '-' : String(r.restarts),
    r.reason ?? '',
  ]);
  const table = [header, ...cells];
  const widths = header.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length)));
  return table.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd()).join('\n');
}
