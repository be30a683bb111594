import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { pollUntil } from '../../helpers/poll.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const BIN = path.join(ROOT, 'dist', 'cli', 'agent-kernel.js');
const run = promisify(execFile);

async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? await newestMtime(full) : (await stat(full)).mtimeMs);
  }
  return newest;
}

/**
 * These tests spawn the built bin, as Claude Code would. Build it when src/ is newer than
 * dist/ (one build at a time: test files run in parallel).
 */
export async function ensureBuilt(): Promise<void> {
  const lock = path.join(ROOT, 'node_modules', '.cache', 'agent-kernel-build.lock');
  mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock, { recursive: false });
      break;
    } catch {
      // Another test file is building; a lock older than 5 minutes is stale.
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 300_000) rmSync(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    // The bundle is the build's last output (scripts/bundle.mjs after tsc).
    const built = statSync(path.join(ROOT, 'dist', 'bundle', 'agent-kernel.cjs'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (built < (await newestMtime(path.join(ROOT, 'src')))) {
      await run('npm', ['run', 'build'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    }
  } finally {
    rmdirSync(lock);
  }
}

export function textOf(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

export interface StdioSession {
  client: Client;
  stderr: () => string;
  pid: number;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** call(), asserting the tool answered without an error (its text is the failure message). */
  ok(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** The SDK's Client over stdio, spawning `node dist/cli/agent-kernel.js serve <dataDir>`. */
export async function connectStdio(dataDir: string, env: Record<string, string> = {}): Promise<StdioSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'serve', dataDir],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'integration-test', version: '1.0.0' });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 300_000 })) as CallToolResult;
  return {
    client,
    stderr: () => stderr,
    pid: transport.pid ?? -1,
    call,
    ok: async (name, args = {}) => {
      const result = await call(name, args);
      expect(result.isError, textOf(result)).toBeFalsy();
      return result;
    },
    close: () => client.close(),
  };
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Poll wait() until `pattern` shows up in what it returns (output may take more than one wait). */
export async function waitFor(call: StdioSession['call'], pattern: RegExp, timeoutSeconds = 10): Promise<string> {
  let seen = '';
  await expect
    .poll(
      async () => {
        seen += textOf(await call('wait', { timeout: timeoutSeconds }));
        return pattern.test(seen);
      },
      { timeout: 120_000, interval: 0 },
    )
    .toBe(true);
  return seen;
}

/** `agent-kernel serve --http` as a child process; resolves once it printed its URL. */
export async function startHttpServe(
  dataDir: string,
  extraArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; url: string; stderr: () => string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'serve', dataDir, '--http', '127.0.0.1:0', ...extraArgs], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  await pollUntil(() => /at (http:\/\/\S+\/mcp)/.test(stderr) || child.exitCode !== null, 'serve --http to print its URL', { timeoutMs: 30_000 }).catch(() => undefined);
  const url = /at (http:\/\/\S+\/mcp)/.exec(stderr)?.[1];
  if (!url) throw new Error(`serve --http did not start: ${stderr}`);
  return {
    child,
    url,
    stderr: () => stderr + stdout,
    stop: async () => {
      if (child.exitCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** PIDs of `agent-kernel serve <dataDir>` processes still running (read from /proc). */
export async function servePids(dataDir: string): Promise<number[]> {
  const { readdir: list, readFile: read } = await import('node:fs/promises');
  const pids: number[] = [];
  for (const entry of await list('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await read(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const argv = cmdline.split('\0');
    if (argv.includes('serve') && argv.includes(dataDir) && argv.some((a) => a.endsWith('agent-kernel.js'))) pids.push(Number(entry));
  }
  return pids;
}

/** The environment for a client we spawn: no credentials of ours, and a throw-away home. */
export function clientEnv(home: string): Record<string, string> {
  const env = { ...(process.env as Record<string, string>) };
  for (const key of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN', 'AGENT_KERNEL_TOKEN']) delete env[key];
  return { ...env, HOME: home, CLAUDE_CONFIG_DIR: `${home}/.claude`, XDG_CONFIG_HOME: `${home}/.config` };
}
