import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bridgeStdio } from '../../../../src/kernel/client/bridge.js';
import { KERNEL_RESTARTED } from '../../../../src/kernel/client/lasting-session.js';
import { connectKernel } from '../../../../src/kernel/client/session-link.js';
import { fakeKernel } from './fake-kernel.js';

/** A client's stdout whose writes complete only when the test says so (a pipe the client reads slowly). */
class HeldOutput extends Writable {
  readonly lines: string[] = [];
  private held: Array<() => void> = [];
  hold = true;
  override _write(chunk: Buffer, _encoding: string, done: (error?: Error | null) => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (this.hold) this.held.push(() => done());
    else done();
  }
  release(): void {
    this.hold = false;
    for (const done of this.held.splice(0)) done();
  }
}

describe('the serve bridge to a kernel', () => {
  let dir: string;
  let socketPath: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-bridge-'));
    socketPath = path.join(dir, 'kernel.sock');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a reply counts as delivered only once it is in the client's pipe; a kernel that goes away answers the call in flight and is reconnected", async () => {
    let kernel = await fakeKernel(socketPath);
    const input = new PassThrough();
    const output = new HeldOutput();
    const notes: string[] = [];
    const bridge = bridgeStdio({ socketPath, client: 'tick', first: await connectKernel(socketPath, { client: 'tick' }), input, output, dataDir: '/data/unit', note: (l) => notes.push(l) });
    await expect.poll(() => kernel.sessions.length).toBe(1);
    const session = kernel.sessions[0]!;

    input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } })}\n`);
    await expect.poll(() => kernel.received.length).toBe(1);
    let delivered = false;
    const sent = session.send({ jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'k', version: '1' } } }).then(() => (delivered = true));
    await expect.poll(() => output.lines.length).toBe(1);
    // Written to the pipe, but the pipe has not taken it: not delivered yet.
    await new Promise((r) => setTimeout(r, 100));
    expect(delivered).toBe(false);
    output.release();
    await sent;
    expect(delivered).toBe(true);

    // A call in flight when the kernel dies gets the restart note; the bridge connects to the next kernel and says initialize again.
    input.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'wait', arguments: {} } })}\n`);
    await expect.poll(() => kernel.received.length).toBe(3);
    await kernel.close();
    await expect.poll(() => output.lines.some((l) => l.includes(KERNEL_RESTARTED))).toBe(true);
    const restarted = JSON.parse(output.lines.find((l) => l.includes(KERNEL_RESTARTED))!) as { id: number; result: { isError: boolean } };
    expect(restarted).toMatchObject({ id: 2, result: { isError: true } });
    kernel = await fakeKernel(socketPath);
    await expect.poll(() => kernel.received.length, { timeout: 5000 }).toBe(2);
    expect(kernel.received[0]).toMatchObject({ method: 'initialize', id: 'agent-kernel-bridge-reinitialize' });
    expect(kernel.received[1]).toMatchObject({ method: 'notifications/initialized' });
    // The repeated initialize's reply is not passed on to the client.
    const before = output.lines.length;
    await kernel.sessions[0]!.send({ jsonrpc: '2.0', id: 'agent-kernel-bridge-reinitialize', result: {} });
    expect(output.lines.length).toBe(before);

    input.end();
    expect(await bridge).toBe(0);
    await kernel.close();
  });
});
