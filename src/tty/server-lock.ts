import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { KernelError } from '../errors.js';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Locks this process holds: a second manager in the same process is refused too. */
const heldHere = new Set<string>();

export interface ServerLock {
  readonly file: string;
  release(): Promise<void>;
}

/**
 * One server drives an instance at a time: a lock file created with O_EXCL holding our PID.
 * A lock whose PID is dead is stale (a server that was killed) and is taken over.
 */
export async function acquireServerLock(file: string): Promise<ServerLock> {
  await mkdir(path.dirname(file), { recursive: true });
  if (heldHere.has(file)) throw lockedBy(process.pid, file);
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      heldHere.add(file);
      return {
        file,
        release: async () => {
          heldHere.delete(file);
          const holder = await readFile(file, 'utf8').catch(() => '');
          if (Number.parseInt(holder, 10) === process.pid) await unlink(file).catch(() => {});
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(await readFile(file, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
      throw lockedBy(holder, file);
    }
    // Stale (dead PID, empty or our own leftover): remove and try again.
    await unlink(file).catch(() => {});
  }
  throw new KernelError('INSTANCE_LOCKED', `Could not take the server lock ${file}: it keeps reappearing. Another server is starting; try again.`, {
    details: { lock: file },
  });
}

function lockedBy(pid: number, file: string): KernelError {
  return new KernelError(
    'INSTANCE_LOCKED',
    `Another agent-kernel server (PID ${pid}) is driving this instance's terminals (lock ${file}). Stop it first, or wait for its tick to end.`,
    { details: { pid, lock: file } },
  );
}
