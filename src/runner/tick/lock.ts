import { CodedError } from '../../errors.js';
import { acquirePidLock, type PidLock } from '../../util/process/pid-lock.js';

export type TickLock = PidLock;

/**
 * One tick per instance at a time: a second is refused with TICK_RUNNING naming the
 * process (and the tick, once the holder has recorded it with `update({tick})`).
 */
export async function acquireTickLock(file: string, instanceName: string): Promise<TickLock> {
  return acquirePidLock(file, (holder) => {
    const which = typeof holder.tick === 'number' ? `tick ${holder.tick}` : 'a tick';
    return new CodedError(
      'TICK_RUNNING',
      `Instance "${instanceName}" is already running ${which} (PID ${holder.pid}, since ${holder.started}). Wait for it to end, or stop it with: kill -INT ${holder.pid}`,
      { details: { pid: holder.pid, tick: holder.tick, lockFile: file } },
    );
  });
}
