import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { watchFolder } from '../../src/mail/folder-watch.js';
import { pollUntil } from './poll.js';

/**
 * Write files into `dir` until a watch of our own on it has seen them. Call it right after setting
 * the watch under test: ours is set the same way (watchFolder) and at the same moment, so once it
 * saw a write made after both were set, that write reached every watch on the folder. The positive
 * event to wait for before asserting that the watch under test saw nothing.
 */
export async function writeUntilWatched(dir: string): Promise<void> {
  let seen = 0;
  const control = watchFolder(path.dirname(dir), path.basename(dir), () => (seen += 1), 600_000);
  try {
    let n = 0;
    const write = () => writeFile(path.join(dir, `host-${n++}`), 'x');
    const wrote = async () => {
      await write();
      return seen > 0;
    };
    await pollUntil(wrote, 'a watch on the folder to see a write', { timeoutMs: 10_000, intervalMs: 10 });
    const before = seen;
    await write();
    await pollUntil(() => seen > before, 'a watch on the folder to see the last write', { timeoutMs: 10_000, intervalMs: 10 });
  } finally {
    control.close();
  }
}
