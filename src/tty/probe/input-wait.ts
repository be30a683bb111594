/**
 * Is a terminal's foreground program waiting for input? Judged from what Linux says about
 * each process of the terminal's foreground process group: its state, the syscall it is
 * blocked in (`/proc/PID/syscall`) and the kernel function it sleeps in (`/proc/PID/wchan`).
 * A line prompt (`input()`, `read -p`) sleeps in read on fd 0; a readline REPL, vi, less
 * and an idle shell in select/poll on the terminal; top selects with a timeout and redraws.
 * Pure: probe-script.ts gathers the facts, this file reads them.
 */

/** One process of the foreground process group, as the probe reported it. */
export interface ForegroundProcess {
  pid: number;
  /** `R` running, `S` sleeping, `D` in I/O, `T` stopped, `Z` zombie... */
  state: string;
  /** How many times it has run on a CPU (`/proc/PID/schedstat`): a change means it woke up. */
  runs: number;
  wchan: string;
  /** The syscall number it is blocked in; undefined while it runs (`running`) or when unreadable. */
  syscall: number | undefined;
  /** The syscall's arguments as the kernel printed them (hexadecimal). */
  args: readonly bigint[];
  /** The command name (`comm`), non-printing characters replaced. */
  name: string;
  /**
   * For a poll on one fd, or a read on an fd other than 0: is that fd the terminal? (A poll's
   * fd is read from the process's memory; undefined when unreadable: a poll then counts as on
   * the terminal, a read on another fd as not.)
   */
  pollsTerminal?: boolean;
  /** The length of a select/ppoll timer, from the process's memory (ms); undefined when unread. */
  timerMs?: number;
}

/** A pane's foreground: its process group and that group's processes. */
export interface ForegroundSample {
  panePid: number;
  /** The terminal's foreground process group; undefined when the pane's process is gone. */
  tpgid: number | undefined;
  processes: ForegroundProcess[];
}

/**
 * - `input`: blocked on the terminal with no timeout (a prompt, a REPL, an editor, a shell).
 * - `input-timed`: blocked on the terminal with a timeout (vim for a few seconds after a key, top between redraws).
 * - `busy`: running, or waiting for something else (sleep, the network, a lock).
 * - `unknown`: nothing readable (no process, another architecture, a probe that failed).
 */
export type InputWait = 'input' | 'input-timed' | 'busy' | 'unknown';

interface SyscallTable {
  read: ReadonlySet<number>;
  /** select-like: (nfds, readfds, writefds, exceptfds, timeout pointer). */
  select: ReadonlySet<number>;
  /** poll: (fds, nfds, timeout in ms). */
  poll: ReadonlySet<number>;
  /** ppoll: (fds, nfds, timeout pointer). */
  ppoll: ReadonlySet<number>;
  /** epoll_wait/epoll_pwait: (epfd, events, maxevents, timeout in ms). */
  epoll: ReadonlySet<number>;
  /** Waiting for a child: neutral (the child decides). */
  waitChild: ReadonlySet<number>;
  /** write/writev: blocked on a full pipe, it waits for the next command of its pipeline (neutral). */
  write: ReadonlySet<number>;
}

const SYSCALLS: Readonly<Record<string, SyscallTable>> = {
  x64: {
    read: new Set([0, 19]), // read, readv
    select: new Set([23, 270]), // select, pselect6
    poll: new Set([7]),
    ppoll: new Set([271]),
    epoll: new Set([232, 281]), // epoll_wait, epoll_pwait
    waitChild: new Set([61, 247]), // wait4, waitid
    write: new Set([1, 20]), // write, writev
  },
  arm64: {
    read: new Set([63, 65]),
    select: new Set([72]),
    poll: new Set(),
    ppoll: new Set([73]),
    epoll: new Set([22]),
    waitChild: new Set([260, 95]),
    write: new Set([64, 66]),
  },
};

/** An int argument the kernel printed as a 64-bit register: -1 may appear as 0xffffffff or 0xffff...ffff. */
function asInt32(value: bigint | undefined): number {
  return Number(BigInt.asIntN(32, value ?? 0n));
}

type ProcessWait = InputWait | 'neutral';

/** What one process is doing. */
export function classifyProcess(process: ForegroundProcess, arch: string = globalThis.process.arch): ProcessWait {
  const table = SYSCALLS[arch];
  if (!table || process.syscall === undefined) return process.state === 'R' || process.state === 'D' ? 'busy' : 'unknown';
  // Woken (input arrived) or doing work: whatever syscall it was in no longer counts.
  if (process.state !== 'S') return process.state === 'T' || process.state === 'Z' ? 'neutral' : 'busy';
  const nr = process.syscall;
  const [a0, a1, a2, a3, a4] = process.args;
  // less reads the terminal on an fd of its own (`seq 100 | less`): the probe says whether an fd is the terminal.
  if (table.read.has(nr)) return a0 === 0n || process.pollsTerminal === true ? 'input' : 'busy';
  if (table.select.has(nr)) {
    // nfds 1: only fd 0 is watched.
    if (a0 !== 1n) return 'busy';
    return a4 === 0n ? 'input' : 'input-timed';
  }
  // A poll on one fd that is not the terminal (`tail -f` on its inotify fd) follows something else.
  if (table.poll.has(nr)) {
    if (a1 !== 1n || process.pollsTerminal === false) return 'busy';
    return asInt32(a2) < 0 ? 'input' : 'input-timed';
  }
  if (table.ppoll.has(nr)) {
    if (a1 !== 1n || process.pollsTerminal === false) return 'busy';
    return a2 === 0n ? 'input' : 'input-timed';
  }
  // An event loop (node, a prompt_toolkit REPL) idle without timers waits for its fds, the terminal among them.
  if (table.epoll.has(nr)) return asInt32(a3) < 0 ? 'input' : 'busy';
  if (table.waitChild.has(nr)) return 'neutral';
  // `seq 1000000 | less`: seq waits for less to read, and less waits for keys.
  if (table.write.has(nr) && /^(anon_)?pipe_write$/.test(process.wchan)) return 'neutral';
  return 'busy';
}

/**
 * The group as a whole: waiting for input only when no process of it is busy and one waits
 * on the terminal (a `make` waiting for its child that reads a prompt is waiting for input).
 */
export function classifyForeground(sample: ForegroundSample | undefined, arch: string = process.arch): InputWait {
  if (!sample || sample.tpgid === undefined || sample.processes.length === 0) return 'unknown';
  const waits = sample.processes.map((p) => classifyProcess(p, arch));
  if (waits.includes('busy')) return 'busy';
  if (waits.includes('unknown')) return 'unknown';
  if (waits.includes('input')) return 'input';
  if (waits.includes('input-timed')) return 'input-timed';
  return 'busy';
}

/**
 * How long the shortest timer of the group's timed waits on the terminal is (ms); undefined
 * when any of them is unknown (memory unreadable) or none waits with a timer.
 */
export function waitTimerMs(sample: ForegroundSample | undefined, arch: string = process.arch): number | undefined {
  const table = SYSCALLS[arch];
  if (!sample || !table) return undefined;
  let shortest: number | undefined;
  for (const p of sample.processes) {
    if (classifyProcess(p, arch) !== 'input-timed') continue;
    // poll carries its timeout in a register; select and ppoll point at it in memory.
    const ms = p.syscall !== undefined && table.poll.has(p.syscall) ? asInt32(p.args[2]) : p.timerMs;
    if (ms === undefined) return undefined;
    shortest = shortest === undefined ? ms : Math.min(shortest, ms);
  }
  return shortest;
}

/** The syscall numbers the probe reads timers and waited fds for, on `arch` (empty when unknown). */
export function timedWaitSyscalls(arch: string = process.arch): { select: number[]; pselect: number[]; poll: number[]; ppoll: number[]; read: number[] } {
  const table = SYSCALLS[arch];
  if (!table) return { select: [], pselect: [], poll: [], ppoll: [], read: [] };
  // select(2) takes a timeval (µs); pselect6 a timespec (ns). x86_64's select is 23.
  const select = [...table.select].filter((nr) => arch === 'x64' && nr === 23);
  return { select, pselect: [...table.select].filter((nr) => !select.includes(nr)), poll: [...table.poll], ppoll: [...table.ppoll], read: [...table.read] };
}

/** Identity of the group's state: unchanged between two samples means nobody woke up in between. */
export function sampleSignature(sample: ForegroundSample | undefined): string {
  if (!sample) return '';
  return `${sample.tpgid}:${sample.processes.map((p) => `${p.pid}/${p.state}/${p.runs}/${p.syscall}`).join(',')}`;
}

/**
 * The group's program: its leader while it lives, else its newest process (a pipeline,
 * `seq 10 | less`, whose first command has ended).
 */
export function foregroundName(sample: ForegroundSample | undefined): string | undefined {
  if (!sample || sample.processes.length === 0) return undefined;
  return (liveLeader(sample) ?? sample.processes.reduce((a, b) => (b.pid > a.pid ? b : a))).name;
}

/** The group's leader, unless it has ended (gone or a zombie). */
function liveLeader(sample: ForegroundSample): ForegroundProcess | undefined {
  return sample.processes.find((p) => p.pid === sample.tpgid && p.state !== 'Z');
}

/**
 * A pipeline whose first command lives while a later one waits on the terminal (`seq 1000000
 * | less`, `make` and the child that prompts): the leader the host names, and the one asking.
 */
export function askingFollower(sample: ForegroundSample, arch: string = process.arch): { leader: string; name: string } | undefined {
  const leader = liveLeader(sample);
  const asking = sample.processes.find((p) => ['input', 'input-timed'].includes(classifyProcess(p, arch)));
  return leader && asking && asking !== leader ? { leader: leader.name, name: asking.name } : undefined;
}

/**
 * The terminal's own shell is the foreground, in select or poll: back at its prompt (readline),
 * not in a builtin `read` (which reads fd 0).
 */
export function shellAtPrompt(sample: ForegroundSample | undefined, arch: string = process.arch): boolean {
  const table = SYSCALLS[arch];
  const own = sample?.processes.find((p) => p.pid === sample.panePid);
  if (!table || !sample || sample.tpgid !== sample.panePid || own?.syscall === undefined) return false;
  return table.select.has(own.syscall) || table.poll.has(own.syscall) || table.ppoll.has(own.syscall);
}

/** The names of the group's live processes: `expect` may name any of them (`seq 1000000 | less`). */
export function groupNames(sample: ForegroundSample | undefined): string[] {
  return (sample?.processes ?? []).filter((p) => p.state !== 'Z').map((p) => p.name);
}

/** The prompt a program waits at: the cursor row up to the cursor, trimmed, at most 80 characters. */
export function promptText(cursorRow: string, cursorX: number): string {
  const text = cursorRow.slice(0, Math.max(0, cursorX)).trim();
  return text.length > 80 ? `…${text.slice(-79)}` : text;
}

/**
 * Has the foreground acted since `before` (sampled just before keys were sent)? A new
 * foreground group or process, or one that ran since: a program blocked on the terminal
 * without a timeout wakes only for input, so it has read the keys.
 */
export function actedSince(before: ForegroundSample, now: ForegroundSample | undefined): boolean {
  if (!now || now.tpgid === undefined) return false;
  if (now.tpgid !== before.tpgid) return true;
  return now.processes.some((p) => {
    const earlier = before.processes.find((b) => b.pid === p.pid);
    return !earlier || p.runs > earlier.runs;
  });
}
