import { chmod, mkdir, unlink } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { configHome } from '../../../config/registry.js';
import { CodedError } from '../../../errors.js';
import type { KernelStatus } from '../../../kernel/supervisor/kernel-supervisor.js';
import { sendJson } from '../../../util/net/http-json.js';
import { requestSocketJson } from '../../../util/net/socket-json.js';

/**
 * The read-only status API of a watch process: HTTP over a unix socket (mode 0660), one
 * socket per watched instance at `<runtime dir>/<name>.sock`.
 *
 *   GET /v1/health          {"state":"running","uptime_seconds":123,"pid":...}
 *   GET /v1/agents          [AgentStatus]
 *   GET /v1/agents/{name}   AgentStatus (name matched case-insensitively; 404 JSON otherwise)
 *
 * Anything else is a 404 (unknown path) or 405 (not GET), both JSON.
 */

const watchStateSchema = z.enum(['starting', 'idle', 'ticking', 'retrying', 'paused', 'backoff', 'limited', 'config-error', 'gave-up', 'stopping']);
export type WatchState = z.infer<typeof watchStateSchema>;

/** The kernel as watch supervises it (kernel-supervisor.ts builds it; checked against that type). */
const kernelStatusSchema: z.ZodType<KernelStatus> = z.object({
  state: z.enum(['starting', 'ready', 'unresponsive', 'restarting', 'waiting', 'stopping', 'stopped']),
  pid: z.int().optional(),
  started: z.string().optional(),
  uptimeSeconds: z.number().optional(),
  lastHeartbeat: z.string().optional(),
  terminals: z.int().optional(),
  terminalsState: z.string().optional(),
  terminalsError: z.string().optional(),
  rssBytes: z.number().optional(),
  sessions: z.int().optional(),
  restarts: z.int(),
  lastExit: z.string().optional(),
  reason: z.string().optional(),
  upgradePending: z.boolean().optional(),
});

/** The body of `GET /v1/agents/{name}`: one schema for the watch that answers and every client that reads it. */
export const agentStatusSchema = z.object({
  name: z.string(),
  dataDir: z.string(),
  harness: z.string(),
  /** What watch is doing now. */
  state: watchStateSchema,
  /** A tick is running. */
  running: z.boolean(),
  paused: z.boolean(),
  /** Why it is paused, backing off, given up or in error (the paused file's text, the config error...). */
  reason: z.string().optional(),
  currentTick: z.object({ number: z.int().optional(), started: z.string(), trigger: z.string() }).optional(),
  lastResult: z.object({ tick: z.int().optional(), status: z.string(), ended: z.string(), durationMs: z.number().optional(), error: z.string().optional() }).optional(),
  nextWake: z.object({ time: z.string(), reason: z.string() }).optional(),
  /** The running tick's retry policy at work: the attempt that failed, why, the next try, when retries end (state.json's current.retry). */
  retry: z.object({ attempt: z.int(), maxAttempts: z.int(), cause: z.string(), nextAt: z.string(), deadline: z.string() }).optional(),
  /** Ticks started by the restart policy (not by a message or a schedule) since the last stable period. */
  restarts: z.int(),
  /** Failed ticks in a row (drives the backoff). */
  failures: z.int(),
  pendingMessages: z.int(),
  watchPid: z.int(),
  watchStarted: z.string(),
  /** The instance's kernel, as watch supervises it. */
  kernel: kernelStatusSchema.optional(),
});

export type AgentStatus = z.infer<typeof agentStatusSchema>;

/**
 * Where sockets live: `$AGENT_KERNEL_RUNTIME_DIR`; else, when tests point
 * `$AGENT_KERNEL_CONFIG_DIR` elsewhere, `<that>/run`; else `$XDG_RUNTIME_DIR/agent-kernel`;
 * else `<XDG config>/agent-kernel/run`.
 */
export function runtimeDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENT_KERNEL_RUNTIME_DIR) return env.AGENT_KERNEL_RUNTIME_DIR;
  if (env.AGENT_KERNEL_CONFIG_DIR) return path.join(env.AGENT_KERNEL_CONFIG_DIR, 'run');
  if (env.XDG_RUNTIME_DIR) return path.join(env.XDG_RUNTIME_DIR, 'agent-kernel');
  return path.join(configHome(env), 'run');
}

export function statusSocketPath(name: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(runtimeDir(env), `${name}.sock`);
}

/** Pure routing: path and method → status code and body. */
export function routeStatusRequest(
  method: string,
  url: string,
  snapshot: () => AgentStatus[],
  health: () => Record<string, unknown>,
): { status: number; body: unknown } {
  if (method !== 'GET' && method !== 'HEAD') return { status: 405, body: { error: 'method not allowed: this API is read-only (GET only)' } };
  const pathname = new URL(url, 'http://localhost').pathname.replace(/\/+$/, '') || '/';
  if (pathname === '/v1/health') return { status: 200, body: health() };
  if (pathname === '/v1/agents') return { status: 200, body: snapshot() };
  const match = /^\/v1\/agents\/([^/]+)$/.exec(pathname);
  if (match) {
    const wanted = decodeURIComponent(match[1]!).toLowerCase();
    const found = snapshot().find((a) => a.name.toLowerCase() === wanted);
    if (found) return { status: 200, body: found };
    return { status: 404, body: { error: `no agent named "${decodeURIComponent(match[1]!)}" is watched here` } };
  }
  return { status: 404, body: { error: `unknown path ${pathname}; try /v1/health, /v1/agents or /v1/agents/{name}` } };
}

/** Is something answering on this socket? */
function socketAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface StatusServer {
  readonly socketPath: string;
  close(): Promise<void>;
}

/**
 * Serve the status API on `socketPath`. A live socket there means another watch process
 * owns the instance (INSTANCE_LOCKED); a stale one (its process died) is replaced.
 */
export async function startStatusServer(socketPath: string, snapshot: () => AgentStatus[]): Promise<StatusServer> {
  const started = Date.now();
  await mkdir(path.dirname(socketPath), { recursive: true, mode: 0o750 });
  if (await socketAnswers(socketPath)) {
    throw new CodedError(
      'INSTANCE_LOCKED',
      `Another watch process already serves ${socketPath}. Stop it first (kernel-runner status shows its PID), or watch another instance.`,
      { details: { socketPath } },
    );
  }
  await unlink(socketPath).catch(() => {});
  const health = () => ({ state: 'running', uptime_seconds: Math.round((Date.now() - started) / 1000), pid: process.pid });
  const server = http.createServer((req, res) => {
    const { status, body } = routeStatusRequest(req.method ?? 'GET', req.url ?? '/', snapshot, health);
    sendJson(res, status, body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await chmod(socketPath, 0o660);
  server.unref();
  return {
    socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** GET a path from a watch process's socket. Rejects when nothing answers within `timeoutMs`. */
export function queryStatusSocket(socketPath: string, urlPath: string, timeoutMs = 2000): Promise<{ status: number; body: unknown }> {
  return requestSocketJson(socketPath, urlPath, { timeoutMs, who: socketPath });
}

/**
 * The status of instance `name` from its watch process, checked against the schema; undefined
 * when no watch process answers, or its answer is not a status (then the caller reads the files).
 */
export async function queryAgentStatus(name: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 2000): Promise<AgentStatus | undefined> {
  const answer = await queryStatusSocket(statusSocketPath(name, env), `/v1/agents/${encodeURIComponent(name)}`, timeoutMs).catch(() => undefined);
  if (answer?.status !== 200) return undefined;
  const status = agentStatusSchema.safeParse(answer.body);
  return status.success ? status.data : undefined;
}
