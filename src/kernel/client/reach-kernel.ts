import { isProcessAlive } from '../../util/process/pid-lock.js';
import type { Instance } from '../../config/instance.js';
import type { Logger } from '../../log/logger.js';
import { isNoKernel } from './link.js';
import { type KernelLink, connectKernel } from './session-link.js';
import type { KernelClientKind } from '../protocol.js';
import { kernelSocketPath } from '../socket-path.js';
import { type InstanceLock, tryInstanceLock } from '../../tty/instance-lock.js';

/**
 * How `serve` serves an instance: through its kernel when one runs (or is starting: it holds the
 * lock), else on its own, holding the instance lock from the start when it is free (else the
 * terminals' start-up reports who holds it, as before).
 */
export type ServeMode = { kind: 'kernel'; socketPath: string; link: KernelLink } | { kind: 'alone'; lock?: InstanceLock };

/** How long `serve` waits for a kernel that holds the lock but does not answer yet (it is starting). */
const KERNEL_STARTING_MS = 30_000;

export async function chooseServeMode(instance: Instance, logger: Logger, client: KernelClientKind): Promise<ServeMode> {
  const socketPath = kernelSocketPath(instance.paths.stateRoot);
  const link = await tryConnect(socketPath, client, logger);
  if (link) return { kind: 'kernel', socketPath, link };
  const taken = await tryInstanceLock(instance.paths.instanceLock, 'serve');
  if ('lock' in taken) return { kind: 'alone', lock: taken.lock };
  const { holder } = taken;
  if (holder.role === 'kernel') {
    logger.info({ pid: holder.pid }, 'the kernel is starting; waiting for its socket');
    const deadline = Date.now() + KERNEL_STARTING_MS;
    while (Date.now() < deadline && isProcessAlive(holder.pid)) {
      const later = await tryConnect(socketPath, client, logger);
      if (later) return { kind: 'kernel', socketPath, link: later };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return { kind: 'alone' };
}

async function tryConnect(socketPath: string, client: KernelClientKind, logger: Logger): Promise<KernelLink | undefined> {
  try {
    return await connectKernel(socketPath, { client });
  } catch (error) {
    if (!isNoKernel(error)) logger.warn({ err: error, socket: socketPath }, 'the kernel socket is there but does not serve; serving without it');
    return undefined;
  }
}
