import type { Instance } from '../../config/instance.js';
import { KernelError, type ErrorCode } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { isNoKernel, kernelRequest } from '../../kernel/client/link.js';
import { kernelSocketPath } from '../../kernel/socket-path.js';
import { attachSandbox, openSandbox } from '../../sandbox/container/open-sandbox.js';
import type { ProgressCallback } from '../../sandbox/engine/image.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { isProcessAlive } from '../../util/process/pid-lock.js';
import { tryServerLock } from '../../tty/server-lock.js';
import { sleep } from '../../util/sleep.js';

/** How long a tick waits for a kernel that holds the instance but does not answer yet (it is starting). */
const KERNEL_STARTING_MS = 60_000;

/**
 * The container a tick's hooks run in, up to date (a Containerfile the agent changed is built).
 * Only the process that owns the instance may change its container: the kernel, when one runs,
 * does it when the tick asks (and restarts its terminals if the container had to be made anew);
 * without one the runner does it itself, holding the instance lock meanwhile; while a standalone
 * server holds the lock, the container is that server's and the tick only runs commands in it.
 */
export async function openTickSandbox(instance: Instance, options: { logger: Logger; onProgress?: ProgressCallback }): Promise<Sandbox> {
  const { logger } = options;
  const socketPath = kernelSocketPath(instance.paths.stateRoot);
  if (await prepareThroughKernel(socketPath)) return attachSandbox(instance);
  const taken = await tryServerLock(instance.paths.serverLock, 'runner');
  if ('lock' in taken) {
    try {
      return await openSandbox(instance, options);
    } finally {
      await taken.lock.release();
    }
  }
  const { holder } = taken;
  if (holder.role === 'kernel') {
    const deadline = Date.now() + KERNEL_STARTING_MS;
    while (Date.now() < deadline && isProcessAlive(holder.pid)) {
      if (await prepareThroughKernel(socketPath)) return attachSandbox(instance);
      await sleep(200);
    }
  }
  logger.info({ pid: holder.pid, role: holder.role }, `a server (PID ${holder.pid}) owns the instance; the tick runs its hooks in the container as that server keeps it`);
  return attachSandbox(instance);
}

/** Ask the kernel to bring the container up to date; false when no kernel answers. */
async function prepareThroughKernel(socketPath: string): Promise<boolean> {
  let answer;
  try {
    // No time limit: an image build takes as long as it takes (container.build_timeout bounds it).
    answer = await kernelRequest(socketPath, 'POST', '/v1/sandbox', 0);
  } catch (error) {
    if (isNoKernel(error)) return false;
    throw new KernelError('KERNEL_UNREACHABLE', `The instance's kernel did not bring the container up: ${(error as Error).message}`, { cause: error });
  }
  if (answer.status === 200) return true;
  const body = answer.body as { error?: string; code?: ErrorCode };
  throw new KernelError(body.code ?? 'CONTAINER_FAILED', body.error ?? `the kernel answered ${answer.status}`);
}
