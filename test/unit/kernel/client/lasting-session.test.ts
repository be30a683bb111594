import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KERNEL_RESTARTED, type KernelLines, LastingSession } from '../../../../src/kernel/client/lasting-session.js';
import { connectKernel } from '../../../../src/kernel/client/session-link.js';
import { type FakeKernel, fakeKernel } from './fake-kernel.js';

const INITIALIZE = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } };
const call = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'wait', arguments: {} } });

/** A session whose client takes every line at once (an HTTP client: each reply acknowledged on its own). */
function sessionFor(socketPath: string, extra: { first?: Awaited<ReturnType<typeof connectKernel>>; dataDir?: string; reconnectMs?: number } = {}) {
  const delivered: string[] = [];
  const notes: string[] = [];
  let gaveUp = 0;
  const session = new LastingSession({
    socketPath,
    client: 'person',
    dataDir: extra.dataDir ?? '/data/unit',
    ...(extra.first ? { first: extra.first } : {}),
    reconnectMs: extra.reconnectMs ?? 5000,
    deliver: (batch: KernelLines) =>
      batch.lines.forEach((line, index) => {
        delivered.push(line);
        batch.delivered(index);
      }),
    gaveUp: () => (gaveUp += 1),
    note: (line) => notes.push(line),
  });
  return { session, delivered, notes, gaveUps: () => gaveUp };
}

describe('a session on the kernel that outlives the kernel', () => {
  let dir: string;
  let socketPath: string;
  let kernel: FakeKernel | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-lasting-'));
    socketPath = path.join(dir, 'kernel.sock');
  });
  afterEach(async () => {
    await kernel?.close();
    kernel = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('started with no kernel (an HTTP session during a restart): connects once one answers and sends the client initialize as it was', async () => {
    const { session, delivered } = sessionFor(socketPath);
    session.send(JSON.stringify(INITIALIZE));
    // Nothing listens yet: the session is polling.
    kernel = await fakeKernel(socketPath);
    await expect.poll(() => kernel!.received.length, { timeout: 5000 }).toBe(1);
    expect(kernel.received[0]).toMatchObject({ method: 'initialize', id: 0 });
    // Its reply reaches the client and is acknowledged line by line.
    await kernel.sessions[0]!.send({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'k', version: '1' } } });
    expect(delivered).toHaveLength(1);
    await session.close();
  });

  it('gives up when no kernel comes back: every open call is told what to do, and the client is ended', async () => {
    kernel = await fakeKernel(socketPath);
    const { session, delivered, gaveUps } = sessionFor(socketPath, { first: await connectKernel(socketPath, { client: 'person' }), reconnectMs: 600 });
    session.send(call(1));
    await expect.poll(() => kernel!.received.length).toBe(1);
    await kernel.close();
    kernel = undefined;
    await expect.poll(() => delivered.length).toBe(1);
    expect(delivered[0]).toContain(KERNEL_RESTARTED);
    // A call made while no kernel answers waits for one; none comes.
    session.send(call(2));
    await expect.poll(() => gaveUps(), { timeout: 5000 }).toBe(1);
    const last = JSON.parse(delivered[1]!) as { id: number; result: { isError: boolean; content: Array<{ text: string }> } };
    expect(last).toMatchObject({ id: 2, result: { isError: true } });
    expect(last.result.content[0]!.text).toMatch(/has not answered for 1 s .*is watch still running\?.*Start agent-kernel serve again/);
  });

  it('answers no call the client cancelled, and gives up on a kernel that serves another data directory', async () => {
    kernel = await fakeKernel(socketPath);
    const { session, delivered, notes, gaveUps } = sessionFor(socketPath, { first: await connectKernel(socketPath, { client: 'person' }) });
    session.send(call(5));
    session.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'the client went away' } }));
    await expect.poll(() => kernel!.received.length).toBe(2);
    await kernel.close();
    kernel = await fakeKernel(socketPath, '/data/another');
    await expect.poll(() => gaveUps(), { timeout: 5000 }).toBe(1);
    expect(delivered).toEqual([]);
    expect(notes.join('\n')).toContain('now serves /data/another, not /data/unit');
  });
});
