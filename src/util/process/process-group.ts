import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CodedError } from '../../errors.js';
import { settlesWithin } from '../race-timeout.js';
import { sleep } from '../sleep.js';

/**
 * A harness process in its own process group, so that stopping it also stops what it
 * started (Claude Code can leave MCP servers behind when it exits).
 */
export interface GroupProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves once the leader has exited: its code, or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hasExited(): boolean;
}

export async function spawnGroup(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<GroupProcess> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  let exited = false;
  const exitedPromise = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      resolve({ code, signal });
    });
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', (error) => {
      const code = (error as NodeJS.ErrnoException).code;
      reject(
        code === 'ENOENT'
          ? new CodedError('HARNESS_MISSING', `The harness command "${command}" was not found. Install it, or set runner.command in the operator's configuration (agent-kernel config <name> shows where).`, {
              cause: error,
              details: { command },
            })
          : new CodedError('HARNESS_FAILED', `Cannot start "${command}": ${error.message}`, { cause: error, details: { command } }),
      );
    });
  });
  // Errors after a successful spawn (EPIPE on stdin...) must not crash the runner.
  child.on('error', () => {});
  child.stdin?.on('error', () => {});
  // If the runner itself goes down, its harness must not outlive it.
  const pid = child.pid as number;
  const killOnExit = (): void => {
    signalGroup(pid, 'SIGKILL');
  };
  process.once('exit', killOnExit);
  void exitedPromise.then(() => process.off('exit', killOnExit));
  return { child, pid, exited: exitedPromise, hasExited: () => exited };
}

/** Send a signal to a whole process group; false when it has no process left. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * The kernel's start time of process `pid` (field 22 of /proc/PID/stat, in clock ticks since
 * boot); undefined when it is gone. A PID and its start time name one process for good: a
 * reused PID has a later start time.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Signal `pgid` only if its leader is still the process recorded (same start time): never a stranger that reused the PID. */
export function signalOwnGroup(pgid: number, startTime: string | undefined, signal: NodeJS.Signals): boolean {
  if (startTime === undefined || processStartTime(pgid) !== startTime) return false;
  return signalGroup(pgid, signal);
}

export function groupAlive(pgid: number): boolean {
  return signalGroup(pgid, 0 as unknown as NodeJS.Signals);
}

/** true once no process of group `pgid` is left; false when some still is after `timeoutMs`. */
export async function waitGroupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!groupAlive(pgid)) return true;
    await sleep(100);
  }
  return !groupAlive(pgid);
}

/**
 * Stop a harness: `signal` (SIGINT) to the leader's group, up to `graceMs` for the leader to
 * exit, then SIGTERM to what is left of the group (MCP servers), and SIGKILL for anything
 * still there a moment later.
 */
export async function stopGroup(proc: GroupProcess, options: { signal: NodeJS.Signals; graceMs: number }): Promise<void> {
  if (!proc.hasExited()) {
    signalGroup(proc.pid, options.signal);
    await settlesWithin(proc.exited, options.graceMs);
  }
  await reapGroup(proc);
}

/** After the leader is gone (or not), make sure nothing of its group survives. */
export async function reapGroup(proc: GroupProcess, termGraceMs = 3000): Promise<void> {
  if (!proc.hasExited()) {
    signalGroup(proc.pid, 'SIGKILL');
    await proc.exited;
  }
  if (!groupAlive(proc.pid)) return;
  signalGroup(proc.pid, 'SIGTERM');
  if (await waitGroupGone(proc.pid, termGraceMs)) return;
  signalGroup(proc.pid, 'SIGKILL');
  await waitGroupGone(proc.pid, 2000);
}
