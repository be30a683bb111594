import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { type NothingLostVerdict, checkNothingLost } from '../../../../bench/lib/nothing-lost.mjs';
import { pollUntil } from '../../../helpers/poll.js';

/**
 * Clients of an instance's kernel for the tests that restart, hang or replace it: one MCP
 * session kept across the kernel's restarts, and a terminal printing numbered lines whose every
 * wait report is kept, to check that nothing printed meanwhile was lost.
 */

export type Call = (name: string, args?: Record<string, unknown>, options?: RequestOptions) => Promise<CallToolResult>;

export interface KernelClient {
  call: Call;
  close(): Promise<void>;
}

function clientOf(client: Client): KernelClient {
  return {
    call: async (name, args = {}, options = {}) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000, ...options })) as CallToolResult,
    close: () => client.close().catch(() => undefined),
  };
}

/** `agent-kernel serve DIR` over stdio, as a tick's Claude Code starts it: it bridges to the running kernel. */
export async function stdioClient(bin: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<KernelClient> {
  const client = new Client({ name: 'kernel-restart-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'serve', dataDir], env: env as Record<string, string>, stderr: 'pipe' }));
  return clientOf(client);
}

/** A client of `serve --http` at `url`. */
export async function httpClient(url: string, token: string): Promise<KernelClient> {
  const client = new Client({ name: 'kernel-restart-test-http', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return clientOf(client);
}

export interface Printer {
  readonly tty: number;
  /** One wait, its report of the printer's terminal kept. */
  look(): Promise<CallToolResult>;
  /** After the kernel restarted: log in again through the same session (its first call was told to). */
  loginAgain(): Promise<void>;
  /** C-c, the last reports, and whether every line came through. */
  finish(): Promise<NothingLostVerdict>;
}

/** Log in, open a terminal and print ~50 numbered lines a second (L-1, L-2...) until finish(). */
export async function startPrinter(call: Call): Promise<Printer> {
  expect((await call('login')).isError).toBeFalsy();
  const { tty } = (await call('open')).structuredContent as { tty: number };
  await call('wait', { timeout: 5 });
  // noflsh -echoctl: the C-c that ends it must not throw away lines tmux has not read yet nor echo ^C into them.
  await call('type', { tty, expect: 'bash', text: 'stty noflsh -echoctl; for i in $(seq 1 100000); do echo L-$i; sleep 0.02; done' });
  const reports: Array<{ text: string }> = [];
  const look = async () => {
    const result = await call('wait', { timeout: 1 });
    const mine = result.isError ? undefined : (result.structuredContent as { changed: Array<{ tty: number; diff: string }> }).changed.find((c) => c.tty === tty);
    if (mine) reports.push({ text: mine.diff });
    return result;
  };
  await look();
  return {
    tty,
    look,
    loginAgain: async () => void await pollUntil(async () => !(await call('login')).isError, 'login through the same session after the restart', { timeoutMs: 60_000 }),
    async finish() {
      await call('type', { tty, expect: 'bash', text: 'C-c' });
      for (let i = 0; i < 5; i++) await look();
      return checkNothingLost(reports);
    },
  };
}

/** What finish() must say: every line in order, none lost, none repeated without the "possibly repeated" label. */
export function expectNothingLost(verdict: NothingLostVerdict): void {
  expect(verdict).toMatchObject({ lost: [], unlabelledRepeats: [], inconsistentElisions: 0, wrongGoneCounts: 0 });
  expect(verdict.last).toBeGreaterThan(100);
}
