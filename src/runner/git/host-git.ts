import { execFile } from 'node:child_process';
import path from 'node:path';

/**
 * Host git for the push mirror only: always an explicit `--git-dir` in host-private state (no
 * repository discovery from the working directory), hooks and fsmonitor off, and none of the
 * environment variables that would point git at another repository. The operator's global and
 * system config (SSH settings, credential helpers, insteadOf) stay: they are trusted and the push needs them.
 */

/** Variables that make git open a different repository, work tree or object store than the one named. */
const REPOSITORY_VARIABLES = /^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR|NAMESPACE|CEILING_DIRECTORIES|DISCOVERY_ACROSS_FILESYSTEM|QUARANTINE_PATH|PREFIX)$/;

/** Pure: the operator's environment without repository-locating variables, and never a prompt. */
export function hostGitEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) if (!REPOSITORY_VARIABLES.test(key)) env[key] = value;
  env.GIT_TERMINAL_PROMPT = '0';
  return env;
}

/** Settings every host git call gets on its command line, over any config file. */
export const SAFE_GIT_CONFIG = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'transfer.fsckObjects=true'] as const;

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run host git on the mirror. Never throws for a non-zero exit (code -1: could not run, or timed out). */
export function hostGit(gitDir: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile(
      'git',
      [`--git-dir=${gitDir}`, ...SAFE_GIT_CONFIG, ...args],
      { cwd: path.dirname(gitDir), env, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr: stderr || (error && code === -1 ? error.message : '') });
      },
    );
  });
}

export type RefPushFlag = 'fast-forward' | 'forced' | 'new' | 'deleted' | 'up-to-date' | 'rejected' | 'error';

export interface RefPushResult {
  flag: RefPushFlag;
  /** `from:to` as git printed it. */
  refs: string;
  /** git's summary, like "[rejected] (non-fast-forward)" or "abc..def". */
  summary: string;
}

const FLAGS: Record<string, RefPushFlag> = { ' ': 'fast-forward', '+': 'forced', '*': 'new', '-': 'deleted', '=': 'up-to-date', '!': 'rejected' };

/** Pure: the ref lines of `git push --porcelain` output (`<flag>\t<from>:<to>\t<summary>`). */
export function parsePushPorcelain(stdout: string): RefPushResult[] {
  const results: RefPushResult[] = [];
  for (const line of stdout.split('\n')) {
    const match = /^(.)\t([^\t]+)\t(.*)$/.exec(line);
    if (!match) continue;
    results.push({ flag: FLAGS[match[1] as string] ?? 'error', refs: match[2] as string, summary: (match[3] as string).trim() });
  }
  return results;
}

/** Pure: the last meaningful line of git's stderr, for a one-line log. */
export function gitErrorLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('hint:'));
  const fatal = lines.find((l) => /^(fatal|error):/.test(l));
  return (fatal ?? lines.at(-1) ?? 'no message').slice(0, 500);
}
