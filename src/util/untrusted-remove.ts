import { type FileHandle, lstat, open, readdir, realpath, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { DIR_FLAGS, PinnedDir, componentsOf, openUntrustedDir } from './untrusted-dir.js';

/**
 * Removing a tree the container can write (`kernel-runner rm --data`). A path-based `rm -rf`
 * (Node's fs.rm included) checks that an entry is a folder, then lists and unlinks
 * `<folder>/<child>` by path: a folder swapped for a link in between makes it list and remove
 * the link's target, anywhere on the host. Here every folder is opened O_NOFOLLOW through its
 * parent's descriptor (untrusted-dir.ts) and every entry is unlinked or rmdir'ed by name inside
 * its pinned folder, so whatever is swapped in, only entries of the tree are removed: a link
 * goes as a link, a FIFO is never opened. A folder on another filesystem (a mount) is left
 * alone, as `rm --one-file-system` does.
 */

export interface TreeRemoval {
  /** Whether `<root>/<rel>` is gone. */
  removed: boolean;
  /** What was left and why (the first few), for a person. */
  left: string[];
}

/** Looks at one folder: entries that appear while it is emptied (a writer still at work) get this many. */
const PASSES = 3;
const MAX_LEFT = 5;

interface Walk {
  /** The filesystem of the tree's top: a folder elsewhere is a mount, not entered. */
  readonly device: number;
  readonly left: string[];
}

function note(walk: Walk, file: string, why: string): void {
  if (walk.left.length < MAX_LEFT) walk.left.push(`${file}: ${why}`);
}

async function emptyFolder(dir: PinnedDir, walk: Walk): Promise<void> {
  for (let pass = 1; pass <= PASSES; pass++) {
    const names = await readdir(dir.self).catch(() => [] as string[]);
    if (names.length === 0) return;
    for (const name of names) await removeEntry(dir, name, walk, pass === PASSES);
  }
}

/** One entry of a pinned folder: unlinked (a file, link, FIFO, socket: never opened), or emptied through its own descriptor and then rmdir'ed. */
async function removeEntry(dir: PinnedDir, name: string, walk: Walk, last: boolean): Promise<void> {
  const entry = dir.at(name);
  const file = path.join(dir.file, name);
  const code = await unlink(entry).then(
    () => undefined,
    (error: NodeJS.ErrnoException) => error.code ?? 'EIO',
  );
  if (code === undefined || code === 'ENOENT') return;
  if (code !== 'EISDIR') {
    if (last) note(walk, file, `cannot be removed (${code})`);
    return;
  }
  let handle: FileHandle;
  try {
    handle = await open(entry, DIR_FLAGS);
  } catch (error) {
    // Swapped for a link or a file since the unlink: the next pass unlinks it.
    if (last) note(walk, file, `changed while being removed (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    return;
  }
  const child = new PinnedDir(handle, file);
  try {
    if ((await handle.stat()).dev !== walk.device) {
      note(walk, file, 'is on another filesystem (a mount), left alone');
      return;
    }
    await emptyFolder(child, walk);
  } finally {
    await child.close();
  }
  // rmdir never follows a link: one swapped in fails (ENOTDIR), a full folder swapped in stays (ENOTEMPTY).
  await rmdir(entry).catch((error: NodeJS.ErrnoException) => {
    if (last && error.code !== 'ENOENT') note(walk, file, `cannot be removed (${error.code ?? String(error)})`);
  });
}

async function gone(file: string): Promise<boolean> {
  return lstat(file).then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
  );
}

/**
 * Remove `<root>/<rel>` and everything in it, never following a link and never leaving the
 * filesystem it is on; `rel` '' removes `root` itself (the operator named it: a link there is
 * theirs and is followed, then removed too). Nothing outside the tree is touched whatever
 * the tree holds or becomes meanwhile; what could not be removed is reported, not thrown.
 */
export async function removeUntrustedTree(root: string, rel: string): Promise<TreeRemoval> {
  const file = path.join(root, rel);
  const parts = componentsOf(rel, file);
  const name = parts.pop();
  if (name === undefined) return removeRoot(root);
  const left: string[] = [];
  const parent = await openUntrustedDir(root, parts.join('/'));
  if (parent) {
    try {
      const walk = { device: (await parent.stat()).dev, left };
      for (let pass = 1; pass <= PASSES && !(await gone(parent.at(name))); pass++) await removeEntry(parent, name, walk, pass === PASSES);
    } finally {
      await parent.close();
    }
  }
  return { removed: await gone(file), left };
}

async function removeRoot(root: string): Promise<TreeRemoval> {
  const left: string[] = [];
  const real = await realpath(root).catch(() => undefined);
  if (real === undefined) return { removed: await gone(root), left };
  const dir = await openUntrustedDir(real, '');
  if (dir) {
    try {
      await emptyFolder(dir, { device: (await dir.stat()).dev, left });
    } finally {
      await dir.close();
    }
  }
  const removed = await rmdir(real).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') left.push(`${root}: cannot be removed (${error.code ?? String(error)})`);
      return error.code === 'ENOENT';
    },
  );
  // The operator's link to it goes once what it named is gone.
  if (removed && (await lstat(root).then((info) => info.isSymbolicLink(), () => false))) await unlink(root).catch(() => undefined);
  return { removed: await gone(root), left: left.slice(0, MAX_LEFT) };
}
