import http from 'node:http';
import type net from 'node:net';
import { KernelError, describeError } from '../errors.js';
import { requestSocketJson } from '../util/socket-json.js';
import { CLIENT_HEADER, HELLO_HEADER, type KernelClientKind, type KernelHealth, type KernelHello, MCP_UPGRADE } from './protocol.js';
import { ensurePrivateSocketDir } from './socket-path.js';

/**
 * The client side of the kernel's socket (protocol.ts): one MCP session as a raw stream, and
 * the small JSON requests (health, sandbox, stop). Node built-ins only: `serve` loads this
 * before anything else when it becomes a bridge.
 */

export interface KernelLink {
  readonly hello: KernelHello;
  /** The session's stream: JSON-RPC lines from the kernel, receipts and JSON-RPC lines to it. */
  readonly socket: net.Socket;
  /** Bytes the kernel sent right after the upgrade, before `socket` was handed over. */
  readonly head: Buffer;
}

/** Nothing listens there (no kernel runs, or it died): the caller goes on without one. */
export function isNoKernel(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'ENOTSOCK';
}

/** Open one MCP session on the kernel's socket. Rejects with ENOENT/ECONNREFUSED (isNoKernel) when none listens. */
export function connectKernel(socketPath: string, options: { client: KernelClientKind; timeoutMs?: number }): Promise<KernelLink> {
  ensurePrivateSocketDir(socketPath, false);
  return new Promise((resolve, reject) => {
    const req = http.request({
      socketPath,
      path: '/v1/mcp',
      method: 'GET',
      headers: { connection: 'Upgrade', upgrade: MCP_UPGRADE, [CLIENT_HEADER]: options.client },
      timeout: options.timeoutMs ?? 10_000,
    });
    req.once('upgrade', (res, socket, head) => {
      const raw = res.headers[HELLO_HEADER];
      try {
        resolve({ hello: JSON.parse(Array.isArray(raw) ? (raw[0] ?? '') : (raw ?? '')) as KernelHello, socket, head });
      } catch (error) {
        socket.destroy();
        reject(new KernelError('KERNEL_UNREACHABLE', `The kernel at ${socketPath} answered without saying who it is: ${(error as Error).message}`));
      }
    });
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => reject(new KernelError('KERNEL_UNREACHABLE', `The kernel at ${socketPath} refused a session (${res.statusCode}): ${messageOf(Buffer.concat(chunks))}`)));
    });
    req.once('timeout', () => req.destroy(Object.assign(new Error(`the kernel at ${socketPath} did not answer within ${options.timeoutMs ?? 10_000} ms`), { code: 'ETIMEDOUT' })));
    req.once('error', reject);
    req.end();
  });
}

function messageOf(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
  } catch {
    // not JSON
  }
  return body.toString('utf8').slice(0, 500);
}

/** One JSON request to the kernel's socket. Rejects when nothing answers within `timeoutMs` (0: no limit). */
export async function kernelRequest(socketPath: string, method: 'GET' | 'POST', urlPath: string, timeoutMs = 5000): Promise<{ status: number; body: unknown }> {
  ensurePrivateSocketDir(socketPath, false);
  try {
    return await requestSocketJson(socketPath, urlPath, { method, timeoutMs, who: `The kernel at ${socketPath}` });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EBADANSWER') throw new KernelError('KERNEL_UNREACHABLE', `${describeError(error)}.`, { cause: error });
    throw error;
  }
}

/** The kernel's health (its heartbeat), or a rejection when it does not answer in time. */
export async function kernelHealth(socketPath: string, timeoutMs = 2000): Promise<KernelHealth> {
  const { status, body } = await kernelRequest(socketPath, 'GET', '/v1/health', timeoutMs);
  if (status !== 200) throw new KernelError('KERNEL_UNREACHABLE', `The kernel at ${socketPath} answered its health check with ${status}.`);
  return body as KernelHealth;
}
