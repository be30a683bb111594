import { CodedError, isCodedError } from '../errors.js';
import { type LockHolder, acquirePidLock, readLockHolder, type PidLock } from '../util/process/pid-lock.js';

export type InstanceLock = PidLock;

/**
 * Who drives an instance's terminals: the long-lived `kernel`, a standalone `serve`, or the
 * runner for the moment it brings the container up before a tick (no server then).
 */
export type LockRole = 'kernel' | 'serve' | 'runner';

/** What the lock file says about its holder (host-private: the container cannot write it). */
export interface InstanceLockHolder extends LockHolder {
  role?: LockRole;
  /** A kernel's socket, where clients reach it. */
  socket?: string;
  /** `serve`: a kernel that a serve hosts for as long as its client stays (kernel/host/kernel-for-serve.ts). */
  hostedBy?: 'serve';
}

/** What a lock's taker says about itself, besides its role. */
export type LockFacts = Pick<InstanceLockHolder, 'socket' | 'hostedBy'>;

function lockedError(file: string, holder: InstanceLockHolder): CodedError {
  const { pid } = holder;
  const who =
    holder.role === 'kernel'
      ? `The kernel of this instance (PID ${pid}) owns its terminals; clients reach it through agent-kernel serve, which connects to it.`
      : holder.role === 'runner'
        ? `kernel-runner (PID ${pid}) is bringing this instance's container up for a tick; try again in a moment.`
        : `Another agent-kernel server (PID ${pid}) is driving this instance's terminals (lock ${file}). Stop it first, or wait for its tick to end.`;
  return new CodedError('INSTANCE_LOCKED', who, { details: { pid, lock: file, ...(holder.role ? { role: holder.role } : {}) } });
}

/**
 * One process drives an instance's terminals (and may change its container) at a time;
 * INSTANCE_LOCKED names the PID holding it and what it is.
 */
export async function acquireInstanceLock(file: string, role: LockRole = 'serve', facts: LockFacts = {}): Promise<InstanceLock> {
  return acquirePidLock(file, (holder) => lockedError(file, holder), { role, ...facts });
}

/** The lock, or (without waiting) the live process holding it. */
export async function tryInstanceLock(file: string, role: LockRole, facts: LockFacts = {}): Promise<{ lock: InstanceLock } | { holder: InstanceLockHolder }> {
  try {
    return { lock: await acquireInstanceLock(file, role, facts) };
  } catch (error) {
    if (!isCodedError(error, 'INSTANCE_LOCKED')) throw error;
    const holder = (await readLockHolder(file)) as InstanceLockHolder | undefined;
    return { holder: holder ?? { pid: Number(error.details.pid), started: '' } };
  }
}
