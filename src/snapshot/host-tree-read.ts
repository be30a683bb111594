import { constants } from 'node:fs';
import { type FileHandle, lstat, open, readdir, readlink } from 'node:fs/promises';
import { DIR_FLAGS, PinnedDir, openUntrustedDir } from '../util/untrusted-dir.js';
import type { Budget } from './budget.js';
import type { ContentSink } from './store.js';
import type { Entry } from './manifest.js';

/**
 * Reading a folder on the host into manifest entries: the data directory (the container writes
 * all of it) and the host's terminal files. Every folder is opened O_NOFOLLOW through its
 * parent's descriptor (untrusted-dir.ts), so a folder swapped for a link mid-walk is never
 * followed out of the tree; only regular files are opened (O_NONBLOCK, then fstat: a FIFO
 * or device is never read); a link's target is recorded as data; a folder on another
 * filesystem (a mount) is left out. Sizes and counts go through the budget before reading.
 */

const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const CHUNK = 1024 * 1024;

export interface Skipped {
  tree: string;
  path: string;
  why: string;
}

export interface ReadTreeOptions {
  /** For messages and the skipped list: 'data', 'host'. */
  tree: string;
  sink: ContentSink;
  budget: Budget;
  skipped: Skipped[];
  /** The same tree's entries in the previous snapshot: a file with the same change stamp is not read again. */
  previous?: ReadonlyMap<string, Entry>;
  /** Paths (relative) left out with their subtrees. */
  exclude?: ReadonlySet<string>;
  /** Files still being appended to (the host's own scrollback files): keep what they held when looked at, instead of refusing. */
  cutGrowth?: boolean;
}

/** Permission bits kept for a host tree: never set-uid or set-gid on the host. */
export const HOST_MODE_MASK = 0o1777;

/** The chunks of an open file, at most `limit` bytes (`size + 1`: one more shows it grew). */
export async function* chunksOf(handle: FileHandle, limit: number): AsyncGenerator<Buffer> {
  let position = 0;
  while (position < limit) {
    const buffer = Buffer.alloc(Math.min(CHUNK, limit - position));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}

/** The entries of `root` (trusted: the operator's data directory or the state directory), in walk order, parents first. */
export async function readHostTree(root: string, options: ReadTreeOptions): Promise<Entry[]> {
  const top = await openUntrustedDir(root, '');
  if (!top) return [];
  const entries: Entry[] = [];
  try {
    await walk(top, '', (await top.stat()).dev, entries, options);
  } finally {
    await top.close();
  }
  return entries;
}

async function walk(dir: PinnedDir, rel: string, device: number, entries: Entry[], options: ReadTreeOptions): Promise<void> {
  const names = (await readdir(dir.self)).sort();
  for (const name of names) {
    const file = rel === '' ? name : `${rel}/${name}`;
    if (options.exclude?.has(file)) continue;
    options.budget.entry(`${options.tree}:${file}`);
    const info = await lstat(dir.at(name)).catch(() => undefined);
    if (!info) continue; // gone meanwhile
    const base = { path: file, mode: info.mode & HOST_MODE_MASK, uid: info.uid, gid: info.gid, size: 0, mtime: Math.floor(info.mtimeMs / 1000) };
    if (info.isDirectory()) {
      if (info.dev !== device) {
        options.skipped.push({ tree: options.tree, path: file, why: 'another filesystem (a mount)' });
        continue;
      }
      const handle = await open(dir.at(name), DIR_FLAGS).catch(() => undefined);
      if (!handle) {
        options.skipped.push({ tree: options.tree, path: file, why: 'swapped for something else while read' });
        continue;
      }
      const child = new PinnedDir(handle, file);
      try {
        entries.push({ ...base, type: 'dir' });
        await walk(child, file, device, entries, options);
      } finally {
        await child.close();
      }
    } else if (info.isSymbolicLink()) {
      const target = await readlink(dir.at(name)).catch(() => undefined);
      if (target === undefined) continue;
      options.budget.content(`${options.tree}:${file}`, Buffer.byteLength(target));
      entries.push({ ...base, type: 'symlink', target });
    } else if (info.isFile()) {
      const entry = await readFile(dir, name, file, base, options);
      if (entry) entries.push(entry);
    } else {
      options.skipped.push({ tree: options.tree, path: file, why: info.isFIFO() ? 'a FIFO (never opened on the host)' : 'a socket or device' });
    }
  }
}

async function readFile(dir: PinnedDir, name: string, file: string, base: Omit<Entry, 'type'>, options: ReadTreeOptions): Promise<Entry | undefined> {
  const where = `${options.tree}:${file}`;
  const handle = await open(dir.at(name), FILE_FLAGS).catch(() => undefined);
  if (!handle) {
    options.skipped.push({ tree: options.tree, path: file, why: 'swapped for a link or removed while read' });
    return undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      options.skipped.push({ tree: options.tree, path: file, why: 'swapped for a FIFO or device while read (never read)' });
      return undefined;
    }
    options.budget.content(where, info.size);
    const stamp = `${info.ino}:${info.size}:${info.ctimeMs}`;
    const before = options.previous?.get(file);
    if (before?.type === 'file' && before.stamp === stamp && before.digest && (await options.sink.reuse(before.digest))) {
      return { ...base, mode: info.mode & HOST_MODE_MASK, type: 'file', size: info.size, digest: before.digest, stamp };
    }
    const stored = await options.sink.put(chunksOf(handle, options.cutGrowth ? info.size : info.size + 1), info.size, where);
    return { ...base, mode: info.mode & HOST_MODE_MASK, type: 'file', size: stored.size, digest: stored.digest, stamp };
  } finally {
    await handle.close();
  }
}
