import { lstat, rename } from 'node:fs/promises';
import path from 'node:path';
import { CodedError } from '../errors.js';
import { isProcessAlive, readLockHolder } from '../util/process/pid-lock.js';
import type { InstancePaths } from './paths.js';

/** Where versions before the name `private/` kept an instance's host-only state, and their instance lock there. */
const OLD_FOLDER = 'kernel';
const OLD_LOCK = 'server.lock';

const missing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Move an instance's host-only state from the folder `kernel/` of older versions to `private/`,
 * once, contents and all: seen marks, mail, events, tick files, the push mirror. Refused while a
 * process of the older version still holds its lock there (both would drive the terminals); left
 * alone when `private/` exists already. Host-private only: `stateRoot` is 0700 and ours (checked
 * by ensureStateDirs first), so no path here is one the container can write.
 */
export async function moveOldStateFolder(paths: InstancePaths): Promise<void> {
  const old = path.join(paths.stateRoot, OLD_FOLDER);
  if (!(await lstat(old).catch(() => undefined))?.isDirectory()) return;
  if (await lstat(paths.privateState).catch(() => undefined)) return;
  const holder = await readLockHolder(path.join(old, OLD_LOCK));
  if (holder && isProcessAlive(holder.pid)) {
    throw new CodedError(
      'INSTANCE_LOCKED',
      `An older agent-kernel (PID ${holder.pid}${typeof holder.role === 'string' ? `, ${holder.role}` : ''}) still runs this instance from ${old}. Stop it (its kernel-runner watch or systemd unit, or the serve), then run this again: the state folder then moves to ${paths.privateState}.`,
      { details: { pid: holder.pid, lock: path.join(old, OLD_LOCK) } },
    );
  }
  try {
    await rename(old, paths.privateState);
  } catch (error) {
    if (missing(error)) return; // another process moved it first
    throw error;
  }
  await rename(path.join(paths.privateState, OLD_LOCK), paths.instanceLock).catch((error: unknown) => {
    if (!missing(error)) throw error;
  });
}
