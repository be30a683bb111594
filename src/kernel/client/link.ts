import { CodedError, describeError } from '../../errors.js';
import { requestSocketJson } from '../../util/net/socket-json.js';
import type { KernelHealth } from '../protocol.js';
import { ensurePrivateSocketDir } from '../socket-path.js';

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
export async function kernelRequest(socketPath: string, method: 'GET' | 'POST', urlPath: string, timeoutMs = 5000): Promise<{ status: number; body: unknown }> {
  ensurePrivateSocketDir(socketPath, false);
  try {
    return await requestSocketJson(socketPath, urlPath, { method, timeoutMs, who: `The kernel at ${socketPath}` });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EBADANSWER') throw new CodedError('KERNEL_UNREACHABLE', `${describeError(error)}.`, { cause: error });
    throw error;
  }
}

/** The kernel's health (its heartbeat), or a rejection when it does not answer in time. */
export async function kernelHealth(socketPath: string, timeoutMs = 2000): Promise<KernelHealth> {
  const { status, body } = await kernelRequest(socketPath, 'GET', '/v1/health', timeoutMs);
  if (status !== 200) throw new CodedError('KERNEL_UNREACHABLE', `The kernel at ${socketPath} answered its health check with ${status}.`);
  return body as KernelHealth;
}
