import { mkdir, open, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Whether a process exists (EPERM means it does, owned by someone else). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a lock file holds: the holder's PID, when it took the lock, and whatever the holder adds. */
export interface LockHolder {
  pid: number;
  started: string;
  [key: string]: unknown;
}

export interface PidLock {
  readonly file: string;
  /** Add facts to the lock file (the tick number once it is known...). */
  update(extra: Record<string, unknown>): Promise<void>;
  release(): Promise<void>;
}

export async function readLockHolder(file: string): Promise<LockHolder | undefined> {
  try {
    const holder = JSON.parse(await readFile(file, 'utf8')) as Partial<LockHolder>;
    return typeof holder.pid === 'number' ? (holder as LockHolder) : undefined;
  } catch {
    return undefined;
  }
}

/** Locks this process holds: a second taker in the same process is refused too. */
const heldHere = new Set<string>();

/**
 * One holder at a time: a lock file created with O_EXCL holding our PID as JSON. A lock whose
 * PID is dead (a holder that was killed) is stale and taken over; a live holder makes
 * `refuse(holder)` the error thrown.
 */
export async function acquirePidLock(file: string, refuse: (holder: LockHolder) => Error): Promise<PidLock> {
  await mkdir(path.dirname(file), { recursive: true });
  const mine: LockHolder = { pid: process.pid, started: new Date().toISOString() };
  if (heldHere.has(file)) throw refuse((await readLockHolder(file)) ?? mine);
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(JSON.stringify(mine) + '\n');
      await handle.close();
      heldHere.add(file);
      return {
        file,
        async update(extra) {
          Object.assign(mine, extra);
          await writeFile(file, JSON.stringify(mine) + '\n');
        },
        async release() {
          heldHere.delete(file);
          if ((await readLockHolder(file))?.pid === process.pid) await unlink(file).catch(() => {});
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readLockHolder(file);
    if (holder && holder.pid !== process.pid && isProcessAlive(holder.pid)) throw refuse(holder);
    // Stale (dead PID, unreadable, or our own leftover): remove and try again.
    await unlink(file).catch(() => {});
  }
  throw new Error(`Could not take the lock ${file}: it keeps reappearing (another process is taking it). Try again.`);
}
