import { createWriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import type { Sandbox, SandboxProcess } from '../../sandbox/sandbox.js';

/**
 * Stream what a command in the sandbox prints on stdout into a new host-private file, up to a
 * byte cap: the agent's `git bundle create -` output arrives as bytes, never through a path the
 * container can see or swap. Over the cap, past the deadline, or on a non-zero exit, the file is
 * removed and the reason returned.
 */

export interface ReceiveOptions {
  /** Created new (mode 0600); must not exist. */
  file: string;
  maxBytes: number;
  timeoutMs: number;
}

export type ReceiveResult = { ok: true; bytes: number } | { ok: false; reason: string; limit: boolean };

const STDERR_KEEP = 4096;

export async function receiveStdout(sandbox: Sandbox, argv: readonly string[], options: ReceiveOptions): Promise<ReceiveResult> {
  let child: SandboxProcess & { kill?: () => Promise<void> | void };
  try {
    child = await sandbox.spawn(argv);
  } catch (error) {
    return { ok: false, reason: (error as Error).message, limit: false };
  }
  child.stdin.on('error', () => undefined);
  child.stdin.end();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < STDERR_KEEP) stderr += chunk.toString('utf8').slice(0, STDERR_KEEP - stderr.length);
  });

  const out = createWriteStream(options.file, { flags: 'wx', mode: 0o600 });
  let bytes = 0;
  let failure: string | undefined;
  let limit = false;
  const stop = (reason: string, overLimit = true): void => {
    if (failure) return;
    failure = reason;
    limit = overLimit;
    child.stdout.unpipe(out);
    void child.kill?.();
    child.close();
  };
  child.stdout.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > options.maxBytes) stop(`it is larger than ${options.maxBytes} bytes`);
  });
  child.stdout.pipe(out);
  const timer = setTimeout(() => stop(`it took longer than ${Math.round(options.timeoutMs / 1000)} s`), options.timeoutMs);
  const written = new Promise<void>((resolve) => {
    out.once('close', resolve);
    out.once('error', (error) => {
      stop(`the host cannot write ${options.file}: ${error.message}`, false);
      resolve();
    });
    // An aborted stream is unpiped: end the file ourselves.
    child.stdout.once('close', () => out.end());
  });
  const code = await child.exited;
  clearTimeout(timer);
  out.end();
  await written;
  if (!failure && code !== 0) failure = `exit code ${code}: ${stderr.trim().split('\n').at(-1) ?? ''}`.trim();
  if (failure) {
    await rm(options.file, { force: true });
    return { ok: false, reason: failure, limit };
  }
  return { ok: true, bytes };
}

const BUNDLE_SIGNATURES = ['# v2 git bundle\n', '# v3 git bundle\n'];

/**
 * Whether a file starts like a git bundle. Git takes any other file it is asked to fetch from
 * as a gitfile (`gitdir: <path>`) and follows it to that repository: a "bundle" the agent wrote
 * that way would make host git fetch, and push, a host repository of the agent's choosing.
 */
export async function hasBundleSignature(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(16);
    const { bytesRead } = await handle.read(head, 0, 16, 0);
    return BUNDLE_SIGNATURES.includes(head.subarray(0, bytesRead).toString('latin1'));
  } finally {
    await handle.close();
  }
}
