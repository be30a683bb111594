import { constants } from 'node:fs';
import { lchown, lutimes, mkdir, open, readdir, symlink } from 'node:fs/promises';
import { CodedError } from '../errors.js';
import { type PinnedDir, componentsOf, openUntrustedDir } from '../util/untrusted-dir.js';
import { removeUntrustedTree } from '../util/untrusted-remove.js';
import { HOST_MODE_MASK } from './host-tree-read.js';
import type { Entry } from './manifest.js';
import type { ObjectStore } from './store.js';

/**
 * Rebuilding a host folder (the data directory, the terminal files) from a manifest. The folder
 * is emptied first by the walk that follows no link (untrusted-remove.ts); then every entry is
 * created inside its pinned parent with O_CREAT|O_EXCL|O_NOFOLLOW, mkdir or symlink, which
 * never write through anything: a manifest path with '..' or an absolute one is refused, and
 * nothing is written outside the folder. Modes lose set-uid and set-gid (the host's side);
 * FIFOs and devices are never made. Folders get their modes last (a read-only one stays writable
 * until its children are in).
 */

const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const OPEN_DIRS = 64;

/** Open folders by relative path, at most OPEN_DIRS at once (the latest used kept). */
class DirCache {
  private readonly open = new Map<string, PinnedDir>();

  constructor(private readonly root: string) {}

  async get(rel: string): Promise<PinnedDir> {
    const found = this.open.get(rel);
    if (found) {
      this.open.delete(rel);
      this.open.set(rel, found);
      return found;
    }
    const dir = await openUntrustedDir(this.root, rel);
    if (!dir) throw new CodedError('SNAPSHOT_MISMATCH', `The snapshot lists ${rel}/… before the folder ${rel} itself: its manifest is damaged.`);
    this.open.set(rel, dir);
    if (this.open.size > OPEN_DIRS) {
      const [oldest, handle] = this.open.entries().next().value as [string, PinnedDir];
      this.open.delete(oldest);
      await handle.close();
    }
    return dir;
  }

  async close(): Promise<void> {
    for (const dir of this.open.values()) await dir.close();
    this.open.clear();
  }
}

/** Remove everything in `root` (not `root` itself), following no link. */
export async function emptyHostTree(root: string): Promise<void> {
  const names = await readdir(root).catch(() => [] as string[]);
  for (const name of names) {
    const removal = await removeUntrustedTree(root, name);
    if (!removal.removed) throw new CodedError('SNAPSHOT_REFUSED', `Cannot empty ${root} to restore it: ${removal.left.join('; ')}.`);
  }
}

export interface WriteTreeOptions {
  /** Give entries their recorded owners (only when this process is root). */
  owners: boolean;
}

/** Create `entries` under the (emptied) folder `root`. */
export async function writeHostTree(root: string, entries: readonly Entry[], store: ObjectStore, options: WriteTreeOptions): Promise<void> {
  await mkdir(root, { recursive: true, mode: 0o700 });
  const dirs = new DirCache(root);
  const folders: Entry[] = [];
  try {
    for (const entry of entries) {
      const parts = componentsOf(entry.path, `${root}/${entry.path}`);
      const name = parts.pop();
      if (name === undefined) throw new CodedError('SNAPSHOT_MISMATCH', `The snapshot lists an empty path: its manifest is damaged.`);
      const parent = await dirs.get(parts.join('/'));
      const at = parent.at(name);
      if (entry.type === 'dir') {
        await mkdir(at, { mode: 0o700 });
        folders.push(entry);
      } else if (entry.type === 'symlink') {
        await symlink(entry.target ?? '', at);
        if (options.owners) await lchown(at, entry.uid, entry.gid);
        await lutimes(at, entry.mtime, entry.mtime);
      } else if (entry.type === 'file') {
        const handle = await open(at, NEW_FILE, 0o600);
        try {
          if (entry.digest === undefined) throw new CodedError('SNAPSHOT_MISMATCH', `The snapshot's ${entry.path} has no digest: its manifest is damaged.`);
          for await (const chunk of await store.read(entry.digest)) await handle.write(chunk as Buffer);
          await handle.chmod(entry.mode & HOST_MODE_MASK);
          if (options.owners) await handle.chown(entry.uid, entry.gid);
          await handle.utimes(entry.mtime, entry.mtime);
        } finally {
          await handle.close();
        }
      }
      // hard links and FIFOs exist only in the container's tree.
    }
  } finally {
    await dirs.close();
  }
  // Deepest first: a folder's mtime is set after its children are made.
  for (const folder of folders.reverse()) {
    const dir = await openUntrustedDir(root, folder.path);
    if (!dir) continue;
    try {
      await dir.chmod(folder.mode & HOST_MODE_MASK);
      if (options.owners) await dir.chown(folder.uid, folder.gid);
      await dir.utimes(folder.mtime);
    } finally {
      await dir.close();
    }
  }
}
