import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * Write a file so that a reader sees either the old content or the new, never a torn
 * mix: a temp file beside it, fsync (unless `durable: false`: a snapshot rewritten
 * every moment need not survive a power cut), then rename over the target.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, mode?: number, options: { durable?: boolean } = {}): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(temp, 'w', mode);
  try {
    await handle.writeFile(data);
    if (options.durable !== false) await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  await rename(temp, file);
}
