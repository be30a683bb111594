import { setTimeout as delay } from 'node:timers/promises';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { type ProcessEntry, parseProcessTable } from './process-table.js';

/** The variable every process of a terminal inherits (set by open), naming instance and TTY. */
export const TERMINAL_MARKER = 'AGENT_KERNEL_TERMINAL';

export function terminalMarker(instance: string, tty: number): string {
  return `${TERMINAL_MARKER}=${instance}:${tty}`;
}

export interface EndedProcess {
  pid: number;
  name: string;
}

/**
 * A terminal's processes: its first process, every descendant, everything in its session,
 * and whatever still carries its marker in the environment (a daemon that called setsid
 * and was re-parented to init keeps it).
 */
export function terminalProcesses(table: readonly ProcessEntry[], rootPid: number | undefined, marked: ReadonlySet<number>): ProcessEntry[] {
  const found = new Set<number>();
  if (rootPid !== undefined) found.add(rootPid);
  for (const p of table) if ((rootPid !== undefined && p.sid === rootPid) || marked.has(p.pid)) found.add(p.pid);
  // Descendants of anything found, to a fixed point.
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) {
      if (!found.has(p.pid) && found.has(p.ppid)) {
        found.add(p.pid);
        grew = true;
      }
    }
  }
  // Never PID 1 (the container's init) nor the reader itself, which inherited nothing of ours.
  return table.filter((p) => found.has(p.pid) && p.pid > 1);
}

const SEPARATOR = '--- agent-kernel marked ---';

/** The process table and the pids whose environment carries `marker`, in one round trip. */
async function readTerminalTable(sandbox: Sandbox, marker: string): Promise<{ table: ProcessEntry[]; marked: Set<number> } | undefined> {
  const script = `cat /proc/[0-9]*/stat 2>/dev/null; echo '${SEPARATOR}'; grep -l -z -x -F -e "$1" /proc/[0-9]*/environ 2>/dev/null; true`;
  const result = await sandbox.run(['sh', '-c', script, 'sh', marker], { timeoutMs: 10_000 }).catch(() => undefined);
  if (result?.exitCode !== 0) return undefined;
  const [stats = '', environ = ''] = result.stdout.split(`${SEPARATOR}\n`);
  const marked = new Set(
    environ
      .split('\n')
      .map((line) => /^\/proc\/(\d+)\/environ$/.exec(line.trim())?.[1])
      .filter((pid): pid is string => pid !== undefined)
      .map(Number),
  );
  return { table: parseProcessTable(stats), marked };
}

/**
 * End every process of a terminal with SIGKILL, in the sandbox, and look again until none
 * is left (a process may fork while we look, and a killed one takes a moment to end on a
 * busy machine); resolves with what was ended.
 */
export async function endTerminalProcesses(sandbox: Sandbox, rootPid: number | undefined, marker: string): Promise<EndedProcess[]> {
  const ended = new Map<number, EndedProcess>();
  for (let round = 0; round < KILL_ROUNDS; round++) {
    const read = await readTerminalTable(sandbox, marker);
    if (!read) break;
    // A zombie has ended already; its parent (or init) reaps it.
    const alive = terminalProcesses(read.table, rootPid, read.marked).filter((p) => p.state !== 'Z' && p.state !== 'X');
    if (alive.length === 0) break;
    const fresh = alive.filter((p) => !ended.has(p.pid));
    for (const p of fresh) ended.set(p.pid, { pid: p.pid, name: p.name });
    if (fresh.length === 0) await delay(KILL_RECHECK_MS);
    await sandbox.run(['kill', '-KILL', ...alive.map((p) => String(p.pid))], { timeoutMs: 10_000 }).catch(() => undefined);
  }
  return [...ended.values()];
}

/** How often close looks for what is left of a terminal (about 2 s in all at most). */
const KILL_ROUNDS = 24;
const KILL_RECHECK_MS = 100;

/** "bash (pid 10), python3 (pid 42) and 2 more" */
export function describeProcesses(processes: readonly EndedProcess[], max = 5): string {
  const named = processes.slice(0, max).map((p) => `${p.name} (pid ${p.pid})`);
  const more = processes.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${more} more` : named.join(', ');
}
