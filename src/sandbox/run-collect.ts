import type { RunOptions, RunResult, SandboxProcess } from './sandbox.js';

/** How long a killed or abandoned command gets to report its exit code. */
const AFTER_KILL_MS = 2000;

/** A process that can also be killed (both sandboxes provide this for run()). */
export type KillableProcess = SandboxProcess & { kill?: () => Promise<void> | void };

/**
 * Most a command's stdout or stderr may hold: what runs in the container is the agent's (it can
 * replace sh, cat or tmux there, and hooks are its own), so `cat /dev/zero` must not fill the
 * host's memory. Everything the host runs there prints far less.
 */
export const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

function gather(stream: NodeJS.ReadableStream, maxBytes: number, onOverflow: () => void): () => string {
  const chunks: Buffer[] = [];
  let kept = 0;
  stream.on('data', (chunk: Buffer | string) => {
    if (kept >= maxBytes) return;
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    chunks.push(buffer.subarray(0, maxBytes - kept));
    kept += buffer.length;
    if (kept >= maxBytes) onOverflow();
  });
  return () => Buffer.concat(chunks).toString('utf8');
}

function ended(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
}

/**
 * The shared half of Sandbox.run(): feed stdin, collect both streams, enforce the timeout and
 * the output cap. Never throws for a non-zero exit; a command that timed out or printed more than
 * the cap is killed when possible, else abandoned.
 */
export async function collect(child: KillableProcess, options: RunOptions): Promise<RunResult> {
  let overflow: (() => void) | undefined;
  const overflowed = new Promise<'overflow'>((resolve) => (overflow = () => resolve('overflow')));
  const maxBytes = options.maxOutputBytes ?? MAX_OUTPUT_BYTES;
  const stdout = gather(child.stdout, maxBytes, () => overflow?.());
  const stderr = gather(child.stderr, maxBytes, () => overflow?.());
  const done = Promise.all([ended(child.stdout), ended(child.stderr), child.exited]).then(([, , code]) => code);
  child.stdin.on('error', () => undefined);
  if (options.input !== undefined) child.stdin.end(options.input);
  else child.stdin.end();

  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    if (options.timeoutMs !== undefined) timer = setTimeout(() => resolve('timeout'), options.timeoutMs);
  });
  const first = await Promise.race([done, timedOut, overflowed]);
  clearTimeout(timer);
  if (first !== 'timeout' && first !== 'overflow') return { exitCode: first, stdout: stdout(), stderr: stderr(), timedOut: false };

  await child.kill?.();
  child.close();
  const afterKill = await Promise.race([child.exited, new Promise<number>((resolve) => setTimeout(() => resolve(-1), AFTER_KILL_MS).unref())]);
  if (first === 'overflow') return { exitCode: afterKill, stdout: stdout(), stderr: stderr(), timedOut: false, outputCapped: true };
  return { exitCode: afterKill, stdout: stdout(), stderr: stderr(), timedOut: true };
}
