import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, lstat, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { type PinnedDir, refused, splitName, withUntrustedDir } from './untrusted-dir.js';

/**
 * Writing into the data directory the container can write: folders on the way are opened
 * (or created) without following a link (untrusted-dir.ts); a new file is created with
 * O_CREAT|O_EXCL|O_NOFOLLOW inside the pinned folder, so a planted link, FIFO or file at
 * that name is never written through; renames happen between pinned folders, so an entry is
 * only ever moved within the data directory, whatever was swapped in meanwhile.
 */

const NEW_FILE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NONBLOCK;

async function createIn(dir: PinnedDir, name: string): Promise<FileHandle | undefined> {
  try {
    const handle = await open(dir.at(name), NEW_FILE_FLAGS, 0o644);
    await dir.adopt(handle).catch(async (error: unknown) => {
      await handle.close();
      throw error;
    });
    return handle;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw refused(path.join(dir.file, name), `cannot be created (${(error as NodeJS.ErrnoException).code ?? String(error)})`, 'Check the folder.', error);
  }
}

async function writeAll(handle: FileHandle, data: string | Uint8Array, mode: number | undefined): Promise<void> {
  try {
    await handle.writeFile(data);
    if (mode !== undefined) await handle.chmod(mode);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Create the folders `<root>/<rel>` where missing, never through a link. */
export async function makeUntrustedDirs(root: string, rel: string): Promise<void> {
  await withUntrustedDir(root, rel, { create: true }, async () => {});
}

/**
 * Create `<root>/<rel>` with `data` unless something (anything: a file, a link, a FIFO) is
 * there already; folders on the way are created. Returns whether it wrote.
 */
export async function writeUntrustedNew(root: string, rel: string, data: string | Uint8Array, mode?: number): Promise<boolean> {
  const file = path.join(root, rel);
  const { dir, name } = splitName(rel, file);
  const wrote = await withUntrustedDir(root, dir, { create: true }, async (pinned) => {
    const handle = await createIn(pinned, name);
    if (!handle) return false;
    await writeAll(handle, data, mode);
    return true;
  });
  return wrote === true;
}

/**
 * Replace `<root>/<rel>` with `data` atomically: a fresh temp file in the same pinned folder,
 * then a rename over the name (which replaces a planted link itself, never its target).
 */
export async function writeUntrustedAtomic(root: string, rel: string, data: string | Uint8Array, mode?: number): Promise<void> {
  const file = path.join(root, rel);
  const { dir, name } = splitName(rel, file);
  await withUntrustedDir(root, dir, { create: true }, async (pinned) => {
    const temp = `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const handle = await createIn(pinned, temp);
    if (!handle) throw refused(file, 'a temp file name was taken', 'Try again.');
    try {
      await writeAll(handle, data, mode);
      await rename(pinned.at(temp), pinned.at(name));
    } catch (error) {
      await unlink(pinned.at(temp)).catch(() => {});
      throw (error as NodeJS.ErrnoException).code ? refused(file, `cannot be replaced (${(error as NodeJS.ErrnoException).code})`, 'Check what is at that name.', error) : error;
    }
  });
}

export type MoveOutcome = 'moved' | 'missing';

/**
 * Rename the regular file `<root>/<fromRel>` to `<root>/<toRel>` (its folder created when
 * missing). Both folders are pinned, so the entry stays in the data directory whatever was
 * planted; a link or special file there is refused (and should one be swapped in after the
 * check, the rename moves the link itself, never what it points to).
 */
export async function moveUntrusted(root: string, fromRel: string, toRel: string): Promise<MoveOutcome> {
  const file = path.join(root, fromRel);
  const source = splitName(fromRel, file);
  const target = splitName(toRel, path.join(root, toRel));
  const outcome = await withUntrustedDir(root, source.dir, {}, async (from) => {
    const info = await lstat(from.at(source.name)).catch(() => undefined);
    if (!info) return 'missing' as const;
    if (!info.isFile()) throw refused(file, 'is a link or special file, not a regular file', 'Remove it.');
    return withUntrustedDir(root, target.dir, { create: true }, async (to) => {
      try {
        await rename(from.at(source.name), to.at(target.name));
        return 'moved' as const;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing' as const;
        throw refused(file, `cannot be moved to ${path.join(root, toRel)} (${(error as NodeJS.ErrnoException).code ?? String(error)})`, 'Check what is at that name there.', error);
      }
    });
  });
  return outcome ?? 'missing';
}

/**
 * Remove the entry `<root>/<rel>` (a file, or a link itself: unlink never follows the last
 * component) from its pinned folder. Returns false when nothing was there.
 */
export async function removeUntrusted(root: string, rel: string): Promise<boolean> {
  const file = path.join(root, rel);
  const { dir, name } = splitName(rel, file);
  const removed = await withUntrustedDir(root, dir, {}, async (pinned) => {
    try {
      await unlink(pinned.at(name));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw refused(file, `cannot be removed (${(error as NodeJS.ErrnoException).code ?? String(error)})`, 'Check what is at that name.', error);
    }
  });
  return removed === true;
}
