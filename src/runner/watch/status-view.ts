import { resolveInstance } from '../../config/instance.js';
import { instancePaths } from '../../config/paths.js';
import { loadRegistry } from '../../config/registry.js';
import { describeError } from '../../errors.js';
import { readPaused } from '../paused.js';
import { loadState } from '../state.js';
import { type AgentStatus, queryStatusSocket, statusSocketPath } from './status-api.js';

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
  /** The full answer of the status API, when there was one. */
  live?: AgentStatus;
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
    live: status,
  };
}

async function fromFiles(name: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<StatusRow> {
  const row: StatusRow = { name, dataDir, state: 'not watched' };
  try {
    const paused = await readPaused(instancePaths(name, dataDir, env).paused);
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
  return row;
}

async function rowFor(name: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<StatusRow> {
  try {
    const answer = await queryStatusSocket(statusSocketPath(name, env), `/v1/agents/${encodeURIComponent(name)}`, 2000);
    if (answer.status === 200) return fromLive(answer.body as AgentStatus);
  } catch {
    // No watch process (or a dead socket): read the files.
  }
  return fromFiles(name, dataDir, env);
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
  const header = ['NAME', 'WATCH', 'STATE', 'CURRENT TICK', 'LAST TICK', 'NEXT WAKE', 'RESTARTS', 'REASON'];
  const cells = rows.map((r) => [
    r.name,
    r.watchPid ? `pid ${r.watchPid}` : '-',
    r.state,
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
