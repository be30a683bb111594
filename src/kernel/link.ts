import http from 'node:http';
import { KernelError } from '../errors.js';
import type { KernelHealth } from './protocol.js';
import { ensurePrivateSocketDir } from './socket-path.js';

/**
 * The client side of the kernel's socket (protocol.ts): the small JSON requests (health,
 * sandbox, stop). An MCP session is session-link.ts's.
 */

/** Nothing listens there (no kernel runs, or it died): the caller goes on without one. */
export function isNoKernel(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'ENOTSOCK';
}

/** One JSON request to the kernel's socket. Rejects when nothing answers within `timeoutMs` (0: no limit). */
export function kernelRequest(socketPath: string, method: 'GET' | 'POST', urlPath: string, timeoutMs = 5000): Promise<{ status: number; body: unknown }> {
  ensurePrivateSocketDir(socketPath, false);
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, path: urlPath, method, ...(timeoutMs > 0 ? { timeout: timeoutMs } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown });
        } catch {
          reject(new KernelError('KERNEL_UNREACHABLE', `The kernel at ${socketPath} answered ${urlPath} with something that is not JSON.`));
        }
      });
      res.on('error', reject);
    });
    req.once('timeout', () => req.destroy(Object.assign(new Error(`the kernel at ${socketPath} did not answer ${urlPath} within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.once('error', reject);
    req.end();
  });
}

/** The kernel's health (its heartbeat), or a rejection when it does not answer in time. */
export async function kernelHealth(socketPath: string, timeoutMs = 2000): Promise<KernelHealth> {
  const { status, body } = await kernelRequest(socketPath, 'GET', '/v1/health', timeoutMs);
  if (status !== 200) throw new KernelError('KERNEL_UNREACHABLE', `The kernel at ${socketPath} answered its health check with ${status}.`);
  return body as KernelHealth;
}
