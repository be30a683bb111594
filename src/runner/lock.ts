import { open, readFile, unlink, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { KernelError } from '../errors.js';

/** What a tick lock file holds: who runs the tick. */
export interface TickLockInfo {
  pid: number;
  started: string;
  tick?: number;
}

export interface TickLock {
  readonly file: string;
  /** Record the tick number once it is known. */
  update(tick: number): Promise<void>;
  release(): Promise<void>;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readLock(file: string): Promise<TickLockInfo | undefined> {
  try {
    const info = JSON.parse(await readFile(file, 'utf8')) as Partial<TickLockInfo>;
    return typeof info.pid === 'number' ? (info as TickLockInfo) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One tick per instance at a time: a lock file holding the runner's PID, created
 * exclusively. A lock whose process is gone is stale and taken over; a live one is refused
 * with TICK_RUNNING naming the process.
 */
export async function acquireTickLock(file: string, instanceName: string): Promise<TickLock> {
  await mkdir(path.dirname(file), { recursive: true });
  const info: TickLockInfo = { pid: process.pid, started: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(JSON.stringify(info) + '\n');
      await handle.close();
      return {
        file,
        async update(tick) {
          info.tick = tick;
          const handle = await open(file, 'w');
          await handle.writeFile(JSON.stringify(info) + '\n');
          await handle.close();
        },
        async release() {
          const holder = await readLock(file);
          if (holder?.pid === process.pid) await unlink(file).catch(() => {});
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readLock(file);
    if (holder && (holder.pid === process.pid || isAlive(holder.pid))) {
      const which = holder.tick ? `tick ${holder.tick}` : 'a tick';
      throw new KernelError(
        'TICK_RUNNING',
        `Instance "${instanceName}" is already running ${which} (PID ${holder.pid}, since ${holder.started}). Wait for it to end, or stop it with: kill -INT ${holder.pid}`,
        { details: { pid: holder.pid, tick: holder.tick, lockFile: file } },
      );
    }
    // Stale (its process is gone) or unreadable: take it over.
    await unlink(file).catch(() => {});
  }
  throw new KernelError('TICK_RUNNING', `Could not take the tick lock ${file}: another runner keeps taking it.`, { details: { lockFile: file } });
}
