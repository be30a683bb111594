import path from 'node:path';
import { describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { MAX_OUTPUT_BYTES } from '../../sandbox/run-collect.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { listUntrusted, relativeInside } from '../../util/untrusted-fs.js';

/**
 * Tick lifecycle hooks: executable files in `system/hooks/{pre-tick,pre-stop,post-tick}/`
 * that run inside the container at tick boundaries, in sorted order. A hook that fails or
 * times out is logged and never stops the tick.
 */
export type HookKind = 'pre-tick' | 'pre-stop' | 'post-tick';

export const HOOK_TIMEOUT_MS: Record<HookKind, number> = {
  'pre-tick': 60_000,
  'pre-stop': 30_000,
  'post-tick': 60_000,
};

/** Pure: which directory entries are hooks. Dotfiles, `~` backups and README-like docs are not. */
export function isHookName(name: string): boolean {
  return !name.startsWith('.') && !name.endsWith('~') && !/\.(md|txt)$/i.test(name);
}

/** Pure: hook order is the byte order of the names ("10-a" before "20-b" before "a"). */
export function sortHookNames(names: readonly string[]): string[] {
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The hook files of a directory, in run order: executable regular files, and links (which the
 * container resolves when it runs them; the host never follows them). A missing directory has
 * none; a link on the way to it is refused (UNTRUSTED_FILE). `root` is the data directory
 * (hooks live in `<data>/system/hooks/<kind>/`).
 */
export async function discoverHooks(dir: string, root = path.resolve(dir, '..', '..', '..')): Promise<string[]> {
  const entries = (await listUntrusted(root, relativeInside(root, dir))) ?? [];
  return sortHookNames(
    entries.filter((e) => isHookName(e.name) && ((e.kind === 'file' && (e.mode & 0o111) !== 0) || e.kind === 'link')).map((e) => e.name),
  ).map((name) => path.join(dir, name));
}

export interface HookResult {
  hook: string;
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

export interface RunHooksOptions {
  sandbox: Sandbox;
  /** Host path → path inside the sandbox (the data repo is mounted there). */
  toSandboxPath: (hostPath: string) => string;
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
  logger: Logger;
}

/** Run every hook of a directory in order; never throws. */
export async function runHooks(kind: HookKind, dir: string, options: RunHooksOptions): Promise<HookResult[]> {
  const results: HookResult[] = [];
  let hooks: string[];
  try {
    hooks = await discoverHooks(dir);
  } catch (error) {
    options.logger.warn({ kind, dir, err: describeError(error) }, 'cannot list hooks');
    return results;
  }
  for (const hook of hooks) {
    const started = Date.now();
    const name = path.basename(hook);
    try {
      const result = await options.sandbox.run([options.toSandboxPath(hook)], {
        env: options.env,
        cwd: options.cwd,
        timeoutMs: options.timeoutMs,
      });
      const entry: HookResult = { hook: name, ...result, durationMs: Date.now() - started };
      results.push(entry);
      const level = result.exitCode === 0 && !result.timedOut && !result.outputCapped ? 'info' : 'warn';
      options.logger[level](
        { kind, hook: name, exitCode: result.exitCode, timedOut: result.timedOut, durationMs: entry.durationMs, stderr: result.stderr.slice(-2000) },
        result.timedOut ? `${kind} hook timed out` : result.outputCapped ? `${kind} hook printed more than ${MAX_OUTPUT_BYTES} bytes: stopped` : `${kind} hook ran`,
      );
    } catch (error) {
      options.logger.warn({ kind, hook: name, err: describeError(error) }, `${kind} hook could not run`);
      results.push({ hook: name, exitCode: -1, stdout: '', stderr: describeError(error), timedOut: false, durationMs: Date.now() - started });
    }
  }
  return results;
}

/**
 * Pure: the blocking issues pre-stop hooks reported: each non-empty stdout line of a hook
 * that exited 0 in time. Fail-open: a hook that failed or timed out reports nothing.
 */
export function preStopIssues(results: readonly HookResult[]): string[] {
  return results
    .filter((r) => r.exitCode === 0 && !r.timedOut)
    .flatMap((r) => r.stdout.split('\n'))
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}
