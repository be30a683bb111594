import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, mkdir, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/** Fill a temp file beside `file` with `write`, then rename it over `file`; on a failure the temp file goes. */
async function replaceAtomically(file: string, mode: number | undefined, write: (handle: FileHandle) => Promise<void>): Promise<void> {
  // A file for its owner alone gets folders for its owner alone, where they are made now.
  await mkdir(path.dirname(file), { recursive: true, ...(mode !== undefined && (mode & 0o077) === 0 ? { mode: 0o700 } : {}) });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(temp, 'w', mode);
  try {
    await write(handle);
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  await rename(temp, file);
}

/**
 * Write a file so that a reader sees either the old content or the new, never a torn
 * mix: a temp file beside it, fsync (unless `durable: false`: a snapshot rewritten
 * every moment need not survive a power cut), then rename over the target.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, mode?: number, options: { durable?: boolean } = {}): Promise<void> {
  await replaceAtomically(file, mode, async (handle) => {
    await handle.writeFile(data);
    if (options.durable !== false) await handle.sync();
  });
}

/**
 * Write `files` one after the other, a newline between non-empty ones, to `file`, the same
 * way, a block at a time: a terminal's kept scrollback can be several files of many MB. A
 * file that cannot be opened (gone, or a link) is left out.
 */
export async function concatFilesAtomic(file: string, files: readonly string[]): Promise<void> {
  const block = Buffer.allocUnsafe(1 << 16);
  await replaceAtomically(file, undefined, async (out) => {
    let wrote = false;
    for (const part of files) {
      const input = await open(part, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
      if (!input) continue;
      try {
        for (let position = 0; ; ) {
          const { bytesRead } = await input.read(block, 0, block.length, position);
          if (bytesRead === 0) break;
          if (position === 0 && wrote) await out.write('\n');
          await out.write(block, 0, bytesRead);
          position += bytesRead;
          wrote = true;
        }
      } finally {
        await input.close();
      }
    }
    await out.sync();
  });
}
