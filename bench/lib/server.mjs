/**
 * `agent-kernel serve` driven by the MCP SDK's Client, over stdio or Streamable HTTP, the
 * way Claude Code drives it. Each session knows its server's PID (for RSS and SIGKILL).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BIN } from './paths.mjs';
import { pollUntil, sleep } from './stats.mjs';

const CALL_TIMEOUT_MS = 300_000;

/** PIDs of servers this run spawned and has not seen exit (killed on an interrupted run). */
export const livePids = new Set();

export function textOf(result) {
  return (result.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

export function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resident set size of a process, in bytes (VmRSS). */
export async function rssOf(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? NaN);
  return kb * 1024;
}

/**
 * Memory only this process holds (Private_Clean + Private_Dirty of smaps_rollup), in bytes:
 * what one more server costs. RSS also counts the Node binary's pages, shared by every server.
 */
export async function privateMemoryOf(pid) {
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
  return (kb('Private_Clean') + kb('Private_Dirty')) * 1024;
}

function serverEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  delete env.AGENT_KERNEL_TOKEN;
  return { ...env, ...extra };
}

/**
 * Spawn a server and connect a Client. `spawnedAt` is performance.now() just before the
 * spawn, so start-up can be timed from there to login answered.
 */
export async function startServer(dataDir, { transport = 'stdio', nodeArgs = [], bin = BIN } = {}) {
  const client = new Client({ name: 'agent-kernel-bench', version: '1.0.0' });
  let stderr = '';
  let pid;
  let child;
  const spawnedAt = performance.now();
  if (transport === 'stdio') {
    const stdio = new StdioClientTransport({ command: process.execPath, args: [...nodeArgs, bin, 'serve', dataDir], env: serverEnv(), stderr: 'pipe' });
    stdio.stderr?.on('data', (chunk) => (stderr += chunk.toString()));
    await client.connect(stdio);
    pid = stdio.pid;
  } else {
    const token = randomBytes(24).toString('hex');
    child = spawn(process.execPath, [...nodeArgs, bin, 'serve', dataDir, '--http', '127.0.0.1:0'], {
      env: serverEnv({ AGENT_KERNEL_TOKEN: token }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.on('data', (chunk) => (stderr += chunk.toString()));
    pid = child.pid;
    const url = await pollUntil(() => /at (http:\/\/\S+\/mcp)/.exec(stderr)?.[1] ?? (child.exitCode !== null ? Promise.reject(new Error(`serve --http exited: ${stderr}`)) : undefined), {
      timeoutMs: 30_000,
      intervalMs: 5,
      what: 'serve --http to print its URL',
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  }
  livePids.add(pid);
  const session = {
    transport,
    pid,
    spawnedAt,
    stderr: () => stderr,
    /** Call a tool; returns the result plus its size (text the model reads, and the whole JSON). */
    async call(name, args = {}) {
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
      return result;
    },
    /** Call and throw when the tool reports an error. */
    async ok(name, args = {}) {
      const result = await session.call(name, args);
      if (result.isError) throw new Error(`${name}(${JSON.stringify(args)}) failed: ${textOf(result)}`);
      return result;
    },
    rss: () => rssOf(pid),
    privateMemory: () => privateMemoryOf(pid),
    /** Graceful stop (stdin closed or SIGTERM), then wait until the process is gone (it releases the lock). */
    async stop() {
      if (transport === 'stdio') await client.close().catch(() => {});
      else {
        await client.close().catch(() => {});
        child.kill('SIGTERM');
      }
      await pollUntil(() => !isRunning(pid), { timeoutMs: 30_000, what: `server ${pid} to exit` }).catch(() => {
        process.kill(pid, 'SIGKILL');
      });
      livePids.delete(pid);
    },
    /** SIGKILL, no goodbye; then wait for the PID to vanish. */
    async kill() {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
      await pollUntil(() => !isRunning(pid), { timeoutMs: 10_000, what: `server ${pid} to die` });
      livePids.delete(pid);
      await client.close().catch(() => {});
      await sleep(0);
    },
  };
  return session;
}

/** wait() until its reason is one of `reasons` (command-finished by default); returns every result it took. */
export async function waitUntil(session, { reasons = ['command-finished', 'exited'], timeout = 60, maxCalls = 20 } = {}) {
  const results = [];
  for (let i = 0; i < maxCalls; i++) {
    const result = await session.ok('wait', { timeout });
    results.push(result);
    if (reasons.includes(result.structuredContent?.reason)) return results;
  }
  throw new Error(`wait did not return ${reasons.join('/')} in ${maxCalls} calls (last: ${textOf(results.at(-1))})`);
}

/** Close every open terminal (from what wait reports). */
export async function closeAll(session) {
  const result = await session.ok('wait', { timeout: 0 });
  for (const t of result.structuredContent.open) await session.call('close', { tty: t.tty });
}
