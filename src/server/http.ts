import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describeError } from '../errors.js';
import { BodyTooLarge, readBody, sendJson } from '../util/net/http-json.js';
import type { Logger } from '../log/logger.js';
import { checkBearer, checkHost, checkOrigin, type Refusal } from './http-auth.js';

/**
 * Streamable HTTP: stateful sessions at /mcp, each one served by `backend` (serve relays each
 * to a session on the instance's kernel: kernel/client/kernel-relay.ts). Every request passes
 * the Origin and Host checks (403) and the bearer token (401) before the MCP layer sees it.
 */
/** Serves one HTTP session: given its transport, connect it to an MCP server and say how to end that. */
export type SessionBackend = (transport: StreamableHTTPServerTransport) => Promise<{ cleanup: () => Promise<void> }>;

export interface HttpServerOptions {
  logger: Logger;
  backend: SessionBackend;
  host: string;
  port: number;
  token: string;
  /** Said in 401 answers: where the token is. */
  tokenHint: string;
  /** Sessions open at once; an initialize beyond it gets 503. Default 16. */
  maxSessions?: number;
  /** A session without a request for this long is closed. Default 30 minutes. */
  sessionIdleMs?: number;
  /** Larger request bodies get 413. Default 4 MiB. */
  maxBodyBytes?: number;
}

export interface RunningHttpServer {
  url: string;
  /** Sessions currently open. */
  sessionCount(): number;
  /** Close every session and stop listening (the runtime is the caller's to dispose). */
  close(): Promise<void>;
}

export const MCP_PATH = '/mcp';
const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
const DEFAULT_MAX_SESSIONS = 16;
const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

interface Session {
  transport: StreamableHTTPServerTransport;
  cleanup: () => Promise<void>;
  lastUsed: number;
}

/** Pure: when the next session slot frees at the latest (the least recently used session reaches the idle limit). */
export function nextSlotFrees(lastUsed: readonly number[], idleMs: number, now: number): number {
  return Math.max(now, Math.min(...lastUsed) + idleMs);
}

function refuse(res: ServerResponse, refusal: Refusal): void {
  sendJson(res, refusal.status, { error: refusal.error, message: refusal.message }, refusal.status === 401 ? { 'www-authenticate': 'Bearer' } : {});
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
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

/** Pure: "45 s", "12 min", "1 h 5 min". */
function formatWait(seconds: number): string {
  if (seconds < 90) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const { logger } = options;
  const sessions = new Map<string, Session>();
  const loopbackOnly = isLoopbackAddress(options.host);
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const { backend } = options;

  async function endSession(id: string, why: string): Promise<void> {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    logger.info({ session: id, sessions: sessions.size, why }, 'HTTP session closed');
    await session.transport.close().catch(() => undefined);
    await session.cleanup().catch(() => undefined);
  }

  // Clients that vanish without DELETE would otherwise hold a session (and its server) for good.
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [id, session] of sessions) if (now - session.lastUsed > idleMs) void endSession(id, `idle for over ${Math.round(idleMs / 1000)} s`);
  }, Math.max(50, Math.min(60_000, idleMs / 2)));
  sweeper.unref();

  async function newSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    let cleanup: () => Promise<void> = () => Promise.resolve();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, cleanup: () => cleanup(), lastUsed: Date.now() });
        logger.info({ session: id, sessions: sessions.size }, 'HTTP session opened');
      },
    });
    // Ended by the client (DELETE): its backend session ends too, as endSession does (a relayed one holds a kernel session and maybe the agent's role).
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id === undefined || !sessions.delete(id)) return;
      logger.info({ session: id, sessions: sessions.size }, 'HTTP session closed');
      void cleanup().catch(() => undefined);
    };
    ({ cleanup } = await backend(transport));
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
    if (session) session.lastUsed = Date.now();

    if (req.method === 'POST') {
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req, maxBodyBytes)) as unknown;
      } catch (error) {
        if (error instanceof BodyTooLarge) {
          sendJson(res, 413, { error: 'payload_too_large', message: `Request bodies are at most ${maxBodyBytes} bytes. Send less per call (write long text to a file and run it).` }, { connection: 'close' });
          return;
        }
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
        if (sessions.size >= maxSessions) {
          const frees = nextSlotFrees([...sessions.values()].map((s) => s.lastUsed), idleMs, Date.now());
          const seconds = Math.ceil((frees - Date.now()) / 1000);
          logger.warn({ sessions: sessions.size, frees: new Date(frees).toISOString() }, 'HTTP session refused: at the cap');
          res.setHeader('retry-after', String(seconds));
          rpcError(
            res,
            503,
            -32000,
            `This server already has ${sessions.size} sessions open, its limit. A slot frees as soon as a client disconnects or ends its session (DELETE with its mcp-session-id); ` +
              `otherwise at ${new Date(frees).toISOString()} (in ${formatWait(seconds)}), when the least recently used session has been idle for ${Math.round(idleMs / 60_000)} min.`,
          );
          return;
        }
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
      if (!session || sessionId === undefined) {
        rpcError(res, sessionId === undefined ? 400 : 404, -32000, sessionId === undefined ? 'Missing mcp-session-id header.' : `Session ${sessionId} not found.`);
        return;
      }
      if (req.method === 'GET') {
        // A client keeps this stream open for as long as it lives; the SDK's client.close() and
        // a script's exit close it without a DELETE. Then the session (and its agent role) is given back at once.
        res.on('close', () => {
          if (!res.writableFinished && sessions.get(sessionId) === session) void endSession(sessionId, 'the client closed its event stream');
        });
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
      clearInterval(sweeper);
      for (const id of [...sessions.keys()]) await endSession(id, 'server closing');
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
