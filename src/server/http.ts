import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describeError } from '../errors.js';
import { createKernelServer, type KernelServerDeps } from './create-server.js';
import { reportDeliveries } from './deliveries.js';
import { checkBearer, checkHost, checkOrigin, type Refusal } from './http-auth.js';

/**
 * Streamable HTTP: stateful sessions at /mcp, one McpServer per session, all sharing the
 * instance's runtime (terminals are per instance, not per client). Every request passes
 * the Origin and Host checks (403) and the bearer token (401) before the MCP layer sees it.
 */
export interface HttpServerOptions extends KernelServerDeps {
  host: string;
  port: number;
  token: string;
  /** Said in 401 answers: where the token is. */
  tokenHint: string;
}

export interface RunningHttpServer {
  url: string;
  /** Sessions currently open. */
  sessionCount(): number;
  /** Close every session and stop listening (the runtime is the caller's to dispose). */
  close(): Promise<void>;
}

export const MCP_PATH = '/mcp';
const MAX_BODY_BYTES = 4 * 1024 * 1024;

interface Session {
  transport: StreamableHTTPServerTransport;
  cleanup: () => Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body) + '\n');
}

function refuse(res: ServerResponse, refusal: Refusal): void {
  sendJson(res, refusal.status, { error: refusal.error, message: refusal.message }, refusal.status === 401 ? { 'www-authenticate': 'Bearer' } : {});
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`request body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function isLoopbackAddress(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** The ids of the requests in a POST body (a message or a batch). */
function requestIds(body: unknown): Array<string | number> {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m: unknown) => {
    const message = m as { id?: unknown; method?: unknown };
    return (typeof message?.id === 'string' || typeof message?.id === 'number') && typeof message.method === 'string' ? [message.id] : [];
  });
}

export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const { logger } = options;
  const sessions = new Map<string, Session>();
  const loopbackOnly = isLoopbackAddress(options.host);

  async function newSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const { server, cleanup } = createKernelServer(options);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, cleanup });
        logger.info({ session: id, sessions: sessions.size }, 'HTTP session opened');
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && sessions.delete(id)) logger.info({ session: id, sessions: sessions.size }, 'HTTP session closed');
    };
    reportDeliveries(transport, options.runtime);
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refusal = checkOrigin(req.headers.origin) ?? checkHost(req.headers.host, loopbackOnly) ?? checkBearer(req.headers.authorization, options.token, options.tokenHint);
    if (refusal) {
      logger.warn({ status: refusal.status, error: refusal.error, origin: req.headers.origin, remote: req.socket.remoteAddress }, 'HTTP request refused');
      refuse(res, refusal);
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== MCP_PATH) {
      sendJson(res, 404, { error: 'not_found', message: `The MCP endpoint is ${MCP_PATH}.` });
      return;
    }
    const sessionHeader = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    const session = sessionId === undefined ? undefined : sessions.get(sessionId);

    if (req.method === 'POST') {
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req)) as unknown;
      } catch (error) {
        rpcError(res, 400, -32700, `Parse error: the body must be JSON-RPC (${describeError(error)}).`);
        return;
      }
      if (session) {
        // A client that goes away mid-call (for example during a long wait) cancels its
        // requests, so the wait stops without marking anything seen.
        const ids = requestIds(body);
        if (ids.length > 0) {
          res.on('close', () => {
            if (res.writableFinished) return;
            for (const id of ids) {
              logger.info({ session: sessionId, request: id }, 'client disconnected mid-request; cancelling it');
              const cancel: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'client disconnected' } };
              session.transport.onmessage?.(cancel);
            }
          });
        }
        await session.transport.handleRequest(req, res, body);
        return;
      }
      if (sessionId === undefined && isInitializeRequest(body)) {
        await newSession(req, res, body);
        return;
      }
      if (sessionId !== undefined) {
        rpcError(res, 404, -32001, `Session ${sessionId} not found (it ended, or the server restarted): initialize a new session.`);
        return;
      }
      rpcError(res, 400, -32000, 'Bad request: send initialize first, then the mcp-session-id header it returns.');
      return;
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      if (!session) {
        rpcError(res, sessionId === undefined ? 400 : 404, -32000, sessionId === undefined ? 'Missing mcp-session-id header.' : `Session ${sessionId} not found.`);
        return;
      }
      await session.transport.handleRequest(req, res);
      return;
    }
    sendJson(res, 405, { error: 'method_not_allowed', message: 'Use POST, GET or DELETE.' }, { allow: 'POST, GET, DELETE' });
  }

  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error({ err: error, method: req.method, url: req.url }, 'HTTP request failed');
      if (!res.headersSent) rpcError(res, 500, -32603, `Internal error: ${describeError(error)}`);
      else res.end();
    });
  });
  httpServer.on('clientError', (error, socket) => {
    logger.debug({ err: error }, 'HTTP client error');
    socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, options.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const address = httpServer.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${hostForUrl}:${address.port}${MCP_PATH}`;
  logger.info({ url }, 'serving MCP over Streamable HTTP');

  return {
    url,
    sessionCount: () => sessions.size,
    async close() {
      for (const [id, session] of sessions) {
        sessions.delete(id);
        await session.transport.close().catch(() => undefined);
        await session.cleanup().catch(() => undefined);
      }
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
