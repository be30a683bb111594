import type { Instance } from '../config/instance.js';
import { CodedError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { kernelRequest } from '../kernel/client/link.js';
import { type InstanceLock, type InstanceLockHolder, tryInstanceLock } from '../tty/instance-lock.js';
import { type PidLock, acquirePidLock, isProcessAlive, readLockHolder } from '../util/process/pid-lock.js';
import { sleep } from '../util/sleep.js';

/**
 * Holding an instance for a snapshot operation: its tick lock (no tick starts meanwhile) and,
 * for a restore, its instance lock as the runner, after asking a running kernel to stop. A
 * kernel that watch starts again meanwhile waits while the runner holds the instance
 * (run-kernel.ts), then takes it, finds the restored container and reports its terminals
 * lost to the restart. Both locks are host-private files: nothing in the container can take,
 * restore or remove a snapshot.
 */

export interface Hold {
  release(): Promise<void>;
}

/** How long a kernel gets to let go of the instance once asked to stop. */
const KERNEL_STOP_MS = 15_000;
const POLL_MS = 25;

export async function holdTicks(instance: Instance): Promise<PidLock> {
  return acquirePidLock(instance.paths.tickLock, (holder) => {
    const which = typeof holder.tick === 'number' ? `tick ${holder.tick}` : 'a tick';
    return new CodedError('TICK_RUNNING', `${instance.name} is running ${which} (PID ${holder.pid}): wait for it to end, then try again.`, { details: { pid: holder.pid } });
  });
}

async function stopKernel(holder: InstanceLockHolder, instance: Instance, logger: Logger | undefined): Promise<void> {
  logger?.info({ pid: holder.pid }, 'asking the kernel to stop for the restore');
  if (holder.socket) await kernelRequest(holder.socket, 'POST', '/v1/stop', 5000).catch(() => undefined);
  const deadline = Date.now() + KERNEL_STOP_MS;
  while (Date.now() < deadline) {
    const now = await readLockHolder(instance.paths.instanceLock);
    if (now?.pid !== holder.pid || !isProcessAlive(holder.pid)) return;
    await sleep(POLL_MS);
  }
  throw new CodedError('INSTANCE_LOCKED', `The kernel of ${instance.name} (PID ${holder.pid}) did not stop within ${KERNEL_STOP_MS / 1000} s; stop its watch (or kill ${holder.pid}) and try again.`);
}

/** The instance lock as the runner; a kernel holding it is asked to stop (watch starts another, which waits for us). */
async function takeFromKernel(instance: Instance, logger: Logger | undefined): Promise<InstanceLock> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const taken = await tryInstanceLock(instance.paths.instanceLock, 'runner');
    if ('lock' in taken) return taken.lock;
    const { holder } = taken;
    if (holder.role === 'kernel') await stopKernel(holder, instance, logger);
    else if (holder.role === 'runner') await sleep(250);
    else throw new CodedError('INSTANCE_LOCKED', `agent-kernel serve (PID ${holder.pid}) drives ${instance.name}'s terminals: end that client first, then try again.`, { details: { pid: holder.pid } });
  }
  throw new CodedError('INSTANCE_LOCKED', `Could not take ${instance.name} from its kernel (it kept coming back): stop its watch and try again.`);
}

/** No tick, and (`restore`) no kernel, for the time of a snapshot operation. `holdsTicks`: the caller is the tick. */
export async function holdInstance(instance: Instance, options: { restore: boolean; holdsTicks?: boolean; logger?: Logger }): Promise<Hold> {
  const ticks = options.holdsTicks ? undefined : await holdTicks(instance);
  let server: InstanceLock | undefined;
  try {
    if (options.restore) server = await takeFromKernel(instance, options.logger);
  } catch (error) {
    await ticks?.release();
    throw error;
  }
  return {
    async release() {
      await server?.release();
      await ticks?.release();
    },
  };
}
