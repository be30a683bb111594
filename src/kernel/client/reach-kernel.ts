import { isProcessAlive, readLockHolder } from '../../util/process/pid-lock.js';
import type { Instance } from '../../config/instance.js';
import type { Logger } from '../../log/logger.js';
import { isNoKernel } from './link.js';
import { type KernelLink, connectKernel } from './session-link.js';
import type { KernelClientKind } from '../protocol.js';
import { kernelSocketPath } from '../socket-path.js';
import type { InstanceLockHolder } from '../../tty/instance-lock.js';

/** A session on the instance's kernel, and the socket it came through. */
export interface ReachedKernel {
  socketPath: string;
  link: KernelLink;
}

/** How long a client waits for a kernel that holds the lock but does not answer yet (it is starting). */
const KERNEL_STARTING_MS = 30_000;

/**
 * A session on the instance's kernel when one runs, or is starting (it holds the instance lock
 * and its socket is not up yet); undefined when there is none.
 */
export async function reachKernel(instance: Instance, logger: Logger, client: KernelClientKind): Promise<ReachedKernel | undefined> {
  const socketPath = kernelSocketPath(instance.paths.stateRoot);
  const link = await tryConnect(socketPath, client, logger);
  if (link) return { socketPath, link };
  const holder = (await readLockHolder(instance.paths.instanceLock)) as InstanceLockHolder | undefined;
  if (holder?.role !== 'kernel' || !isProcessAlive(holder.pid)) return undefined;
  logger.info({ pid: holder.pid }, 'the kernel is starting; waiting for its socket');
  const deadline = Date.now() + KERNEL_STARTING_MS;
  while (Date.now() < deadline && isProcessAlive(holder.pid)) {
    const later = await tryConnect(socketPath, client, logger);
    if (later) return { socketPath, link: later };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

async function tryConnect(socketPath: string, client: KernelClientKind, logger: Logger): Promise<KernelLink | undefined> {
  try {
    return await connectKernel(socketPath, { client });
  } catch (error) {
    if (!isNoKernel(error)) logger.warn({ err: error, socket: socketPath }, 'the kernel socket is there but does not answer; not using it');
    return undefined;
  }
}
