import type { Sandbox } from '../sandbox/sandbox.js';

/** One process as /proc/PID/stat describes it. */
export interface ProcessEntry {
  pid: number;
  /** proc(5) state: R, S, D, Z (zombie: ended, not yet reaped), ... */
  state: string;
  ppid: number;
  pgid: number;
  sid: number;
  /** The foreground process group of its controlling terminal (-1: none). */
  tpgid: number;
  /** Resident memory in KiB. */
  rssKb: number;
  /** Clock ticks after boot when it started. */
  startTime: number;
  name: string;
}

const PAGE_KB = 4;

/** Every process's stat line in one round trip (procfs: needs no ps in the image). */
const READ_ALL = ['sh', '-c', 'cat /proc/[0-9]*/stat 2>/dev/null; true'];

/** The sandbox's processes now; undefined when they cannot be read. */
export async function readProcessTable(sandbox: Sandbox): Promise<ProcessEntry[] | undefined> {
  const result = await sandbox.run(READ_ALL, { timeoutMs: 5000 }).catch(() => undefined);
  return result?.exitCode === 0 ? parseProcessTable(result.stdout) : undefined;
}

/** `/proc/PID/stat` lines; the name is in parentheses and may hold spaces and parentheses itself. */
export function parseProcessTable(text: string): ProcessEntry[] {
  const out: ProcessEntry[] = [];
  for (const line of text.split('\n')) {
    const open = line.indexOf(' (');
    const close = line.lastIndexOf(') ');
    if (open < 0 || close < open) continue;
    const f = line.slice(close + 2).split(' ');
    // f[0] is field 3 of proc(5) (state): field N is f[N - 3].
    const int = (n: number) => Number.parseInt(f[n - 3] ?? '', 10);
    const entry: ProcessEntry = {
      pid: Number.parseInt(line.slice(0, open), 10),
      name: line.slice(open + 2, close),
      state: f[0] ?? '',
      ppid: int(4),
      pgid: int(5),
      sid: int(6),
      tpgid: int(8),
      startTime: int(22),
      rssKb: int(24) * PAGE_KB,
    };
    if (Number.isInteger(entry.pid) && Number.isInteger(entry.pgid)) out.push(entry);
  }
  return out;
}

/** The newest process of the terminal's foreground process group, `leaderPid` being the terminal's first process. */
export function foregroundOf(table: readonly ProcessEntry[], leaderPid: number): ProcessEntry | undefined {
  const leader = table.find((p) => p.pid === leaderPid);
  if (!leader || leader.tpgid <= 0) return undefined;
  const group = table.filter((p) => p.pgid === leader.tpgid);
  return group.sort((a, b) => a.startTime - b.startTime || a.pid - b.pid).at(-1);
}
