import type { Sandbox } from '../../sandbox/sandbox.js';

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

/** A name (comm) holds at most 15 bytes, so its closing ") " is within this many characters of its "(". */
const NAME_WINDOW = 18;

/**
 * Concatenated `/proc/PID/stat` records. The name is in parentheses and may hold anything,
 * newlines and ") S 1 2" included (a process sets its own), so a record is not a line: it starts
 * with "PID (", its name ends at the last ") " the 15-byte name allows, and the numeric fields
 * after it end at the next newline (they hold none).
 */
export function parseProcessTable(text: string): ProcessEntry[] {
  const out: ProcessEntry[] = [];
  const start = /(\d+) \(/y;
  const lineEnd = (from: number) => {
    const newline = text.indexOf('\n', from);
    return newline < 0 ? text.length : newline;
  };
  for (let at = 0; at < text.length; ) {
    start.lastIndex = at;
    const head = start.exec(text);
    const nameAt = start.lastIndex;
    const close = head ? text.slice(nameAt, nameAt + NAME_WINDOW).lastIndexOf(') ') : -1;
    if (!head || close < 0) {
      // Not a whole record (a torn read, a kernel thread's long name): resume after this line.
      at = lineEnd(at) + 1;
      continue;
    }
    const end = lineEnd(nameAt + close);
    const entry = statEntry(Number.parseInt(head[1]!, 10), text.slice(nameAt, nameAt + close), text.slice(nameAt + close + 2, end));
    if (entry) out.push(entry);
    at = end + 1;
  }
  return out;
}

function statEntry(pid: number, name: string, rest: string): ProcessEntry | undefined {
  const f = rest.split(' ');
  // f[0] is field 3 of proc(5) (state): field N is f[N - 3].
  const int = (n: number) => Number.parseInt(f[n - 3] ?? '', 10);
  const entry: ProcessEntry = {
    pid,
    name,
    state: f[0] ?? '',
    ppid: int(4),
    pgid: int(5),
    sid: int(6),
    tpgid: int(8),
    startTime: int(22),
    rssKb: int(24) * PAGE_KB,
  };
  return Number.isInteger(entry.pid) && Number.isInteger(entry.pgid) && Number.isInteger(entry.ppid) ? entry : undefined;
}

/** The newest process of the terminal's foreground process group, `leaderPid` being the terminal's first process. */
export function foregroundOf(table: readonly ProcessEntry[], leaderPid: number): ProcessEntry | undefined {
  const leader = table.find((p) => p.pid === leaderPid);
  if (!leader || leader.tpgid <= 0) return undefined;
  const group = table.filter((p) => p.pgid === leader.tpgid);
  return group.sort((a, b) => a.startTime - b.startTime || a.pid - b.pid).at(-1);
}
