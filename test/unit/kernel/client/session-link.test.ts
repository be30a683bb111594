import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HELLO_HEADER, MCP_UPGRADE } from '../../../../src/kernel/protocol.js';
import { connectKernel } from '../../../../src/kernel/client/session-link.js';

/** A socket server that answers each connection's request with `answer(socket)`. */
async function listen(socketPath: string, answer: (socket: net.Socket) => void): Promise<net.Server> {
  const server = net.createServer((socket) => socket.once('data', () => answer(socket)));
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return server;
}

const HELLO = { instance: 'unit', dataDir: '/data/ünit', stateRoot: '/state/unit', pid: 1, version: '0' };
const UPGRADED = `HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: ${MCP_UPGRADE}\r\n${HELLO_HEADER}: ${JSON.stringify(HELLO)}\r\n\r\n`;

describe('an MCP session on the kernel socket, opened without node:http', () => {
  let dir: string;
  let socketPath: string;
  let server: net.Server | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-link-'));
    socketPath = path.join(dir, 'kernel.sock');
  });
  afterEach(async () => {
    server?.close();
    server = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('reads who the kernel is, and loses none of the bytes it sends with the answer or right after', async () => {
    server = await listen(socketPath, (socket) => {
      socket.write(`${UPGRADED}{"jsonrpc":"2.0","method":"first"}\n`);
      setTimeout(() => socket.write('{"jsonrpc":"2.0","method":"second"}\n'), 20);
    });
    const link = await connectKernel(socketPath, { client: 'tick' });
    expect(link.hello).toEqual(HELLO);
    expect(link.head.toString()).toBe('{"jsonrpc":"2.0","method":"first"}\n');
    // The stream waits, paused, for its reader.
    await new Promise((r) => setTimeout(r, 100));
    const later: string[] = [];
    link.socket.on('data', (chunk: Buffer) => later.push(chunk.toString()));
    link.socket.resume();
    await expect.poll(() => later.join('')).toBe('{"jsonrpc":"2.0","method":"second"}\n');
    link.socket.destroy();
  });

  it("says why a kernel refused the session, and does not wait out its timeout for one that hung up", async () => {
    server = await listen(socketPath, (socket) =>
      socket.end('HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"error":"The kernel already has 64 sessions, its limit; close one."}\n'),
    );
    await expect(connectKernel(socketPath, { client: 'person' })).rejects.toThrow(/refused a session \(503\): The kernel already has 64 sessions/);
    server.close();
    server = await listen(path.join(dir, 'other.sock'), (socket) => socket.end());
    const began = Date.now();
    await expect(connectKernel(path.join(dir, 'other.sock'), { client: 'person', timeoutMs: 10_000 })).rejects.toThrow(/closed the connection before it answered/);
    expect(Date.now() - began).toBeLessThan(5000);
  });
});
