import path from 'node:path';
import { describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { MAX_OUTPUT_BYTES } from '../../sandbox/run-collect.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import type { AgentFiles } from '../../util/agent-files.js';

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
 * The hooks of the folder `rel` of the data directory, by name in run order: executable regular
 * files, and links (which the container resolves when it runs them; the host never follows them).
 * Listed through the agent's files, a host folder or the volume on a remote engine, under the same
 * rules: a missing folder has none, a link on the way to it is refused (UNTRUSTED_FILE), and what
 * the listing says (names, modes) only picks what the container runs, inside itself.
 */
export async function discoverHooks(files: AgentFiles, rel: string): Promise<string[]> {
  const entries = (await files.list(rel)) ?? [];
  return sortHookNames(entries.filter((e) => isHookName(e.name) && ((e.kind === 'file' && (e.mode & 0o111) !== 0) || e.kind === 'link')).map((e) => e.name));
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
  /** Where the hooks are listed: the instance's data directory, on whichever side of the engine (container/agent-files-for.ts). */
  files: AgentFiles;
  /** The data directory's path inside the sandbox (the same as the host's: the folder or the volume is mounted there). */
  dataDir: string;
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
  logger: Logger;
}

/** Run every hook of the folder `rel` of the data directory in order; never throws. */
export async function runHooks(kind: HookKind, rel: string, options: RunHooksOptions): Promise<HookResult[]> {
  const results: HookResult[] = [];
  let names: string[];
  try {
    names = await discoverHooks(options.files, rel);
  } catch (error) {
    options.logger.warn({ kind, dir: path.posix.join(options.dataDir, rel), err: describeError(error) }, 'cannot list hooks');
    return results;
  }
  for (const name of names) {
    const started = Date.now();
    try {
      const result = await options.sandbox.run([path.posix.join(options.dataDir, rel, name)], {
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
