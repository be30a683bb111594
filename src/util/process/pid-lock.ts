import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../atomic-write.js';

/** Whether a process exists (EPERM means it does, owned by someone else). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a lock file holds: the holder's PID, when it took the lock, and whatever the holder adds (the tick...). */
const LockHolderSchema = z.looseObject({ pid: z.number().int().positive(), started: z.string() });
export type LockHolder = z.infer<typeof LockHolderSchema>;

export interface PidLock {
  readonly file: string;
  /** Add facts to the lock file (the tick number once it is known...). */
  update(extra: Record<string, unknown>): Promise<void>;
  release(): Promise<void>;
}

type Read = { kind: 'absent' } | { kind: 'held'; holder: LockHolder; text: string } | { kind: 'garbage'; text: string };

async function readLock(file: string): Promise<Read> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: left by something else, never by a taker (takers only link complete files).
  }
  const holder = LockHolderSchema.safeParse(json);
  return holder.success ? { kind: 'held', holder: holder.data, text } : { kind: 'garbage', text };
}

export async function readLockHolder(file: string): Promise<LockHolder | undefined> {
  const read = await readLock(file).catch(() => undefined);
  return read?.kind === 'held' ? read.holder : undefined;
}

/** Create `file` holding `text`, or fail with EEXIST: link() makes it appear complete, never empty. */
async function createComplete(file: string, text: string): Promise<boolean> {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
  try {
    await link(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => {});
  }
}

/**
 * Remove a stale lock only if it still holds exactly what we judged stale. Racing reapers of
 * the same stale content serialise on a reap ticket named after it, so a reaper that looked
 * before another took the lock cannot unlink the new, live lock.
 */
async function reapStale(file: string, staleText: string): Promise<void> {
  const ticket = `${file}.reap-${Buffer.from(staleText).toString('base64url').slice(-40)}`;
  if (!(await createComplete(ticket, JSON.stringify({ pid: process.pid, started: new Date().toISOString() })))) {
    // Another reaper is at work; if it died mid-reap, clear its ticket so the lock is not stuck.
    const reaper = await readLock(ticket);
    if (reaper.kind === 'held' && !isProcessAlive(reaper.holder.pid)) await unlink(ticket).catch(() => {});
    return;
  }
  try {
    const now = await readLock(file);
    if (now.kind !== 'absent' && now.text === staleText) await unlink(file).catch(() => {});
  } finally {
    await unlink(ticket).catch(() => {});
  }
}

/** Locks this process holds: a second taker in the same process is refused too. */
const heldHere = new Set<string>();

/**
 * One holder at a time: a lock file that appears atomically (link of a complete temp file)
 * holding our PID as JSON, and is updated by rename. A lock whose PID is dead (a holder that
 * was killed) is stale and taken over; a live holder makes `refuse(holder)` the error thrown.
 * `facts` (who holds it, and how to reach it) are written with the PID.
 */
export async function acquirePidLock(file: string, refuse: (holder: LockHolder) => Error, facts: Record<string, unknown> = {}): Promise<PidLock> {
  await mkdir(path.dirname(file), { recursive: true });
  // The facts are in the file from its first instant: a reader never sees a holder without them.
  const mine: LockHolder = { ...facts, pid: process.pid, started: new Date().toISOString() };
  if (heldHere.has(file)) throw refuse((await readLockHolder(file)) ?? mine);
  // Claimed here before the first await: a second taker in this process waits on no file of ours,
  // and never judges the lock file (our PID in it) a leftover of ours to reap.
  heldHere.add(file);
  try {
    return await takeLock(file, mine, refuse);
  } catch (error) {
    heldHere.delete(file);
    throw error;
  }
}

async function takeLock(file: string, mine: LockHolder, refuse: (holder: LockHolder) => Error): Promise<PidLock> {
  for (let attempt = 0; attempt < 20; attempt++) {
    if (await createComplete(file, JSON.stringify(mine) + '\n')) {
      return {
        file,
        async update(extra) {
          Object.assign(mine, extra);
          await writeFileAtomic(file, JSON.stringify(mine) + '\n', 0o600);
        },
        async release() {
          heldHere.delete(file);
          if ((await readLockHolder(file))?.pid === process.pid) await unlink(file).catch(() => {});
        },
      };
    }
    const read = await readLock(file);
    if (read.kind === 'absent') continue;
    if (read.kind === 'held' && read.holder.pid !== process.pid && isProcessAlive(read.holder.pid)) throw refuse(read.holder);
    // Stale: a dead PID, our own leftover, or content no taker writes.
    await reapStale(file, read.text);
  }
  throw new Error(`Could not take the lock ${file}: it keeps changing hands (other processes are taking it). Try again.`);
}
