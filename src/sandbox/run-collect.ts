import type { RunOptions, RunResult, SandboxProcess } from './sandbox.js';

/** How long a killed or abandoned command gets to report its exit code. */
const AFTER_KILL_MS = 2000;

/** A process that can also be killed (both sandboxes provide this for run()). */
export type KillableProcess = SandboxProcess & { kill?: () => Promise<void> | void };

function gather(stream: NodeJS.ReadableStream): () => string {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer | string) => chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)));
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
 * The shared half of Sandbox.run(): feed stdin, collect both streams, enforce the timeout.
 * Never throws for a non-zero exit; a timed-out command is killed when possible, else abandoned.
 */
export async function collect(child: KillableProcess, options: RunOptions): Promise<RunResult> {
  const stdout = gather(child.stdout);
  const stderr = gather(child.stderr);
  const done = Promise.all([ended(child.stdout), ended(child.stderr), child.exited]).then(([, , code]) => code);
  child.stdin.on('error', () => undefined);
  if (options.input !== undefined) child.stdin.end(options.input);
  else child.stdin.end();

  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    if (options.timeoutMs !== undefined) timer = setTimeout(() => resolve('timeout'), options.timeoutMs);
  });
  const first = await Promise.race([done, timedOut]);
  clearTimeout(timer);
  if (first !== 'timeout') return { exitCode: first, stdout: stdout(), stderr: stderr(), timedOut: false };

  await child.kill?.();
  child.close();
  const afterKill = await Promise.race([child.exited, new Promise<number>((resolve) => setTimeout(() => resolve(-1), AFTER_KILL_MS).unref())]);
  return { exitCode: afterKill, stdout: stdout(), stderr: stderr(), timedOut: true };
}
