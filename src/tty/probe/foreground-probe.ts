import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../log/logger.js';
import { packageRoot } from '../../util/package-root.js';
import type { Sandbox, SandboxProcess } from '../../sandbox/sandbox.js';
import { type ForegroundProcess, type ForegroundSample, timedWaitSyscalls } from './input-wait.js';
import { SerialQueue } from '../../util/serial-queue.js';

/** The probe's program, read once. */
let script: string | undefined;

/**
 * One long-lived bash in the sandbox that answers "what is the foreground of these panes
 * doing?" from /proc, with builtins only (no process per question). A line of pane PIDs
 * in; per pane a `T` line and one `P` line per process of its foreground group, then `E`.
 * The group is found from the leader's parent down (`/proc/PID/task/TID/children`), or by
 * reading every process when the kernel has no children files or the leader is gone: a
 * group member whose parent died is missed by the walk (it then counts as not there).
 * A process blocked on one fd with a timer, polling one fd, or reading an fd other than 0 also
 * gets a `W` line: whether that fd is the terminal (the pane's device, or /dev/tty, which
 * getpass, sudo, ssh and git open for a password), and the timer's length in ms; the timer
 * and a poll's fd are read from its memory (dd, od: only for such processes), and the timer
 * counts only if the process has not run since its syscall was read; both are remembered
 * for the next question while the process has not run again. A select's timer is read just
 * after the answer (so the first answer has none): the question that confirms a wait finds it. Its output is the sandbox's word and is parsed as hostile input.
 * The program is assets/foreground-probe.sh, read from this install (never the data directory) and
 * given to bash as its command, with this architecture's syscall numbers as its arguments.
 */
export function probeCommand(arch: string = process.arch): string[] {
  script ??= readFileSync(path.join(packageRoot(), 'assets', 'foreground-probe.sh'), 'utf8');
  const nrs = timedWaitSyscalls(arch);
  const lists = [nrs.select, nrs.pselect, nrs.poll, nrs.ppoll, nrs.read].map((n) => n.join(' '));
  return ['bash', '--noprofile', '--norc', '-c', script, 'foreground-probe', ...lists];
}

/** The most a reply may be: more means something is wrong (or hostile), and the probe is restarted. */
const MAX_REPLY_CHARS = 256 * 1024;
const REPLY_TIMEOUT_MS = 2000;

/** Parse one reply (without its `E` line). Lines that do not fit are ignored. */
export function parseProbeReply(lines: readonly string[]): Map<number, ForegroundSample> {
  const samples = new Map<number, ForegroundSample>();
  let current: ForegroundSample | undefined;
  for (const line of lines) {
    const f = line.split(' ');
    if (f[0] === 'T' && f.length === 3) {
      const panePid = toInt(f[1]);
      if (panePid === undefined) continue;
      current = { panePid, tpgid: toInt(f[2]), processes: [] };
      samples.set(panePid, current);
    } else if (f[0] === 'P' && current && f.length >= 7 && current.processes.length < 256) {
      const pid = toInt(f[1]);
      if (pid === undefined) continue;
      const syscallFields = f.slice(6);
      const syscall = toInt(syscallFields[0]);
      const args: bigint[] = [];
      for (const hex of syscallFields.slice(1, 7)) {
        if (!/^0x[0-9a-f]{1,16}$/.test(hex)) break;
        args.push(BigInt(hex));
      }
      const process: ForegroundProcess = {
        pid,
        state: /^[A-Za-z]$/.test(f[2] ?? '') ? f[2]! : '?',
        runs: toInt(f[3]) ?? 0,
        wchan: (f[4] ?? '').slice(0, 64),
        syscall,
        args,
        name: (f[5] ?? '').slice(0, 64),
      };
      current.processes.push(process);
    } else if (f[0] === 'W' && current && f.length === 4) {
      const process = current.processes.at(-1);
      if (!process || toInt(f[1]) !== process.pid) continue;
      if (f[2] === '1' || f[2] === '0') process.pollsTerminal = f[2] === '1';
      const timerMs = toInt(f[3]);
      if (timerMs !== undefined) process.timerMs = timerMs;
    }
  }
  return samples;
}

function toInt(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,10}$/.test(text)) return undefined;
  return Number(text);
}

interface Pending {
  lines: string[];
  chars: number;
  resolve: (samples: Map<number, ForegroundSample> | undefined) => void;
  timer: NodeJS.Timeout;
}

/**
 * Asks the probe, one question at a time. Any failure (no bash, the process died, a reply
 * too slow or too long) answers undefined, and the next question starts a new probe; after
 * repeated failures it stops trying and wait falls back to silence.
 */
export class ForegroundProbe {
  private process: SandboxProcess | undefined;
  private starting: Promise<SandboxProcess | undefined> | undefined;
  private pending: Pending | undefined;
  private readonly queue = new SerialQueue();
  private partial = '';
  private failures = 0;
  private closed = false;

  constructor(
    private readonly sandbox: Sandbox,
    private readonly logger: Logger,
  ) {}

  /** The foreground of each pane (by its process ID); undefined when the probe cannot answer. */
  sample(panePids: readonly number[]): Promise<Map<number, ForegroundSample> | undefined> {
    return this.queue.run(() => this.ask(panePids));
  }

  get usable(): boolean {
    return !this.closed && this.failures < 3;
  }

  close(): void {
    this.closed = true;
    this.stop();
  }

  private async ask(panePids: readonly number[]): Promise<Map<number, ForegroundSample> | undefined> {
    const pids = panePids.filter((p) => Number.isInteger(p) && p > 0);
    if (pids.length === 0 || !this.usable) return undefined;
    const proc = await this.ensure();
    if (!proc) return undefined;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.fail('the probe did not answer in time'), REPLY_TIMEOUT_MS);
      this.pending = { lines: [], chars: 0, resolve, timer };
      proc.stdin.write(`${pids.join(' ')}\n`);
    });
  }

  private ensure(): Promise<SandboxProcess | undefined> {
    if (this.process) return Promise.resolve(this.process);
    this.starting ??= this.sandbox
      .spawn(probeCommand())
      .then((proc) => {
        this.process = proc;
        this.partial = '';
        proc.stdout.setEncoding('utf8');
        proc.stdout.on('data', (chunk: string) => this.onData(chunk));
        proc.stderr.resume();
        const ended = () => {
          if (this.process === proc) this.fail('the probe exited');
        };
        proc.exited.then(ended, ended);
        return proc;
      })
      .catch((error: unknown) => {
        this.failures += 1;
        this.logger.debug({ error: String(error) }, 'foreground probe did not start');
        return undefined;
      })
      .finally(() => {
        this.starting = undefined;
      });
    return this.starting;
  }

  private onData(chunk: string): void {
    const pending = this.pending;
    if (!pending) return;
    this.partial += chunk;
    pending.chars += chunk.length;
    if (pending.chars > MAX_REPLY_CHARS) {
      this.fail('the probe answered too much');
      return;
    }
    const lines = this.partial.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line === 'E') {
        clearTimeout(pending.timer);
        this.pending = undefined;
        this.failures = 0;
        pending.resolve(parseProbeReply(pending.lines));
        return;
      }
      pending.lines.push(line);
    }
  }

  private fail(reason: string): void {
    const pending = this.pending;
    this.pending = undefined;
    if (pending) {
      clearTimeout(pending.timer);
      pending.resolve(undefined);
    }
    if (!this.process) return;
    if (!this.closed) {
      this.failures += 1;
      this.logger.debug({ reason }, 'foreground probe restarted');
    }
    this.stop();
  }

  private stop(): void {
    const proc = this.process;
    this.process = undefined;
    this.partial = '';
    if (!proc) return;
    proc.stdin.end();
    proc.close();
  }
}
