import http from 'node:http';
import type net from 'node:net';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { HELLO_HEADER, MCP_UPGRADE } from '../../../../src/kernel/protocol.js';
import { SocketServerTransport } from '../../../../src/kernel/host/socket-transport.js';

export interface FakeKernel {
  sessions: SocketServerTransport[];
  received: JSONRPCMessage[];
  close(): Promise<void>;
}

/** A kernel's socket with nothing behind it but the transport: each session's transport is handed to the test. */
export async function fakeKernel(socketPath: string, dataDir = '/data/unit'): Promise<FakeKernel> {
  const sessions: SocketServerTransport[] = [];
  const received: JSONRPCMessage[] = [];
  const server = http.createServer((_req, res) => res.end());
  server.on('upgrade', (_req, socket: net.Socket) => {
    const hello = { instance: 'unit', dataDir, stateRoot: '/state/unit', pid: process.pid, version: '0' };
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: ${MCP_UPGRADE}\r\n${HELLO_HEADER}: ${JSON.stringify(hello)}\r\n\r\n`);
    const transport = new SocketServerTransport(socket);
    transport.onmessage = (message) => received.push(message);
    void transport.start();
    sessions.push(transport);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    sessions,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) void s.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
