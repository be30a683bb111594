import { KernelError } from '../errors.js';
import { acquirePidLock, type PidLock } from '../util/pid-lock.js';

export type ServerLock = PidLock;

/** One server drives an instance's terminals at a time; INSTANCE_LOCKED names the PID holding it. */
export async function acquireServerLock(file: string): Promise<ServerLock> {
  return acquirePidLock(
    file,
    ({ pid }) =>
      new KernelError(
        'INSTANCE_LOCKED',
        `Another agent-kernel server (PID ${pid}) is driving this instance's terminals (lock ${file}). Stop it first, or wait for its tick to end.`,
        { details: { pid, lock: file } },
      ),
  );
}
