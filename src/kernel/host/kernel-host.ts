import { chmod, unlink } from 'node:fs/promises';
import http from 'node:http';
import type net from 'node:net';
import { sendJson } from '../../util/net/http-json.js';
import { CLIENT_HEADER, HELLO_HEADER, type KernelHealth, type KernelHello, MCP_UPGRADE, type SandboxReady } from '../protocol.js';
import { ensurePrivateSocketDir } from '../socket-path.js';
import { createMcpServer, type McpServerDeps } from '../../server/create-server.js';
import { answerSandboxRequest } from './prepare-sandbox.js';
import { SocketServerTransport } from './socket-transport.js';
import { answerTerminalRequest } from './terminal-routes.js';

/**
 * The kernel's socket (src/kernel/protocol.ts): MCP sessions for every client (a tick's bridge,
 * a person's `serve`, an HTTP front), its health, and the few things only the owner of the
 * instance may do. Reachable only by this user: the folder is 0700 and host-only, the socket 0600.
 */

export interface KernelHostOptions extends McpServerDeps {
  socketPath: string;
  hello: KernelHello;
  health(sessions: number): KernelHealth;
  /** Bring the container up to date for a tick (build a changed image, recreate a stale container), saying how it goes. */
  prepareSandbox(onProgress: (line: string) => void): Promise<SandboxReady>;
  /** Begin stopping gracefully. */
  stop(): void;
  /** Sessions at once; more are refused (503). Default 64. */
  maxSessions?: number;
}

export interface KernelHost {
  sessionCount(): number;
  close(): Promise<void>;
}

const DEFAULT_MAX_SESSIONS = 64;

export async function startKernelHost(options: KernelHostOptions): Promise<KernelHost> {
  const { logger } = options;
  /** Each open session's transport, and how it ends. */
  const sessions = new Map<SocketServerTransport, () => Promise<void>>();
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;

  const server = http.createServer((req, res) => {
    const route = `${req.method ?? 'GET'} ${new URL(req.url ?? '/', 'http://kernel').pathname}`;
    if (route === 'GET /v1/health') return sendJson(res, 200, options.health(sessions.size));
    if (route === 'POST /v1/stop') {
      sendJson(res, 202, { stopping: true });
      options.stop();
      return;
    }
    if (route === 'POST /v1/sandbox') return answerSandboxRequest(res, options.prepareSandbox);
    if (answerTerminalRequest(req, res, options)) return;
    if (route === 'GET /v1/mcp') return sendJson(res, 426, { error: `Send Upgrade: ${MCP_UPGRADE} for an MCP session.` });
    sendJson(res, 404, { error: `unknown route ${route}; try GET /v1/health` });
  });

  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n${JSON.stringify({ error: text })}\n`);
    };
    if (new URL(req.url ?? '/', 'http://kernel').pathname !== '/v1/mcp' || req.headers.upgrade !== MCP_UPGRADE) return refuse(400, `Upgrade to ${MCP_UPGRADE} at /v1/mcp.`);
    if (sessions.size >= maxSessions) return refuse(503, `The kernel already has ${sessions.size} sessions, its limit; close one.`);
    const client = req.headers[CLIENT_HEADER] === 'tick' ? 'tick' : 'person';
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: ${MCP_UPGRADE}\r\n${HELLO_HEADER}: ${JSON.stringify(options.hello)}\r\n\r\n`);
    if (head.length > 0) socket.unshift(head);
    socket.setNoDelay(true);
    const transport = new SocketServerTransport(socket);
    const { server: mcp, cleanup } = createMcpServer({ runtime: options.runtime, instance: options.instance, logger: options.logger, client });
    const end = async () => {
      if (!sessions.delete(transport)) return;
      await cleanup().catch(() => undefined);
      logger.info({ session: transport.sessionId, client, sessions: sessions.size }, 'kernel session closed');
    };
    sessions.set(transport, end);
    transport.onerror = (error) => logger.debug({ err: error, session: transport.sessionId }, 'kernel session error');
    transport.onclose = () => void end();
    mcp.connect(transport).then(
      () => logger.info({ session: transport.sessionId, client, sessions: sessions.size }, 'kernel session opened'),
      (error: unknown) => {
        logger.error({ err: error }, 'a kernel session could not start');
        socket.destroy();
      },
    );
  });

  ensurePrivateSocketDir(options.socketPath, true);
  // We hold the instance lock: a socket file here was left by a kernel that died.
  await unlink(options.socketPath).catch(() => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await chmod(options.socketPath, 0o600);
  logger.info({ socket: options.socketPath }, 'kernel listening');

  return {
    sessionCount: () => sessions.size,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      // Upgraded sockets are no longer the HTTP server's to close, but it waits for them: end each session's.
      await Promise.all([...sessions.keys()].map((transport) => transport.close()));
      await closed;
      await unlink(options.socketPath).catch(() => undefined);
    },
  };
}
