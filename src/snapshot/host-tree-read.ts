import { type Stats, constants } from 'node:fs';
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
  /**
   * A container's upper layer (container-tree-read.ts): set-uid bits kept, hard links and FIFOs
   * recorded as the engine's archive records them, and anything the layer holds that is not
   * plainly the container's view (a whiteout, a folder swapped while read) stops the walk with
   * NotPlainError, so the caller reads that part through the engine.
   */
  layer?: LayerView;
  /** Before each change stamp (the container's id: a new container's inode numbers mean nothing). */
  stampPrefix?: string;
  /** readHostSubtree under `layer`: false when a folder at the top is not the whole folder (NotPlainError). */
  wholeFolder?: boolean;
}

export interface LayerView {
  /** 'container:/usr/bin/x' for messages. */
  where(file: string): string;
}

/** Thrown under `layer` when the walk meets what only the engine can interpret. */
export class NotPlainError extends Error {}

/**
 * A file changed this close before the walk may change again within the same clock tick of its
 * ctime after we read it (racy-git): its stamp is not recorded, so the next snapshot reads it.
 */
const RACY_MS = 2000;

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
    await walk(top, '', { device: (await top.stat()).dev, topDepth: 0, started: Date.now(), links: new Map() }, entries, options);
  } finally {
    await top.close();
  }
  return entries;
}

/**
 * The entry `<root>/<rel>` and, when it is a folder, everything under it (entry paths relative to
 * `root`); the folders on the way are opened without following links; [] when it is missing.
 */
export async function readHostSubtree(root: string, rel: string, options: ReadTreeOptions): Promise<Entry[]> {
  const parts = rel.split('/');
  const name = parts.pop();
  if (name === undefined || name === '') return readHostTree(root, options);
  const device = (await lstat(root)).dev;
  const parent = await openUntrustedDir(root, parts.join('/')).catch((error: unknown) => {
    if (options.layer) throw new NotPlainError(`the way to ${rel} is not plain folders`, { cause: error });
    throw error;
  });
  if (!parent) return [];
  const entries: Entry[] = [];
  try {
    await visit(parent, name, rel, { device, topDepth: rel.split('/').length, started: Date.now(), links: new Map() }, entries, options);
  } finally {
    await parent.close();
  }
  return entries;
}

interface WalkState {
  device: number;
  /** Components of the path the walk began at (readHostSubtree), 0 for a whole tree. */
  topDepth: number;
  /** When the walk began (for RACY_MS). */
  started: number;
  /** Under `layer`: `dev:ino` of files with more than one link → the first path seen. */
  links: Map<string, string>;
}

async function walk(dir: PinnedDir, rel: string, state: WalkState, entries: Entry[], options: ReadTreeOptions): Promise<void> {
  const names = (await readdir(dir.self)).sort();
  for (const name of names) {
    const file = rel === '' ? name : `${rel}/${name}`;
    if (options.exclude?.has(file)) continue;
    await visit(dir, name, file, state, entries, options);
  }
}

function whereOf(file: string, options: ReadTreeOptions): string {
  return options.layer ? options.layer.where(file) : `${options.tree}:${file}`;
}

/** Owner and permission bits as the manifest records them. */
function baseOf(file: string, info: Stats, options: ReadTreeOptions): Omit<Entry, 'type'> {
  const base = { path: file, mode: info.mode & HOST_MODE_MASK, uid: info.uid, gid: info.gid, size: 0, mtime: Math.floor(info.mtimeMs / 1000) };
  return options.layer ? { ...base, mode: info.mode & 0o7777 } : base;
}

async function visit(dir: PinnedDir, name: string, file: string, state: WalkState, entries: Entry[], options: ReadTreeOptions): Promise<void> {
  options.budget.entry(whereOf(file, options));
  const info = await lstat(dir.at(name)).catch(() => undefined);
  if (!info) return; // gone meanwhile
  const base = baseOf(file, info, options);
  if (info.isDirectory() && options.wholeFolder === false && file.split('/').length === state.topDepth) throw new NotPlainError(`${file} is a folder only modified`);
  if (info.isDirectory()) {
    if (info.dev !== state.device) {
      if (options.layer) throw new NotPlainError(`${file} is on another filesystem`);
      options.skipped.push({ tree: options.tree, path: file, why: 'another filesystem (a mount)' });
      return;
    }
    const handle = await open(dir.at(name), DIR_FLAGS).catch(() => undefined);
    if (!handle) {
      if (options.layer) throw new NotPlainError(`${file} was swapped while read`);
      options.skipped.push({ tree: options.tree, path: file, why: 'swapped for something else while read' });
      return;
    }
    const child = new PinnedDir(handle, file);
    try {
      entries.push({ ...base, type: 'dir' });
      await walk(child, file, state, entries, options);
    } finally {
      await child.close();
    }
  } else if (info.isSymbolicLink()) {
    const target = await readlink(dir.at(name)).catch(() => undefined);
    if (target === undefined) return;
    options.budget.content(whereOf(file, options), Buffer.byteLength(target));
    entries.push({ ...base, type: 'symlink', target });
  } else if (info.isFile()) {
    const first = options.layer && info.nlink > 1 ? state.links.get(`${info.dev}:${info.ino}`) : undefined;
    if (first !== undefined) {
      entries.push({ ...base, type: 'hardlink', target: first });
      return;
    }
    const entry = await readFile(dir, name, file, base, info, state, options);
    if (!entry) return;
    entries.push(entry);
    if (options.layer && info.nlink > 1) state.links.set(`${info.dev}:${info.ino}`, file);
  } else if (options.layer && info.isFIFO()) {
    entries.push({ ...base, type: 'fifo' });
  } else if (options.layer && info.isCharacterDevice() && info.rdev === 0) {
    // An overlay whiteout: a deletion from a lower layer, which only the engine's diff interprets.
    throw new NotPlainError(`${file} is a whiteout`);
  } else {
    options.skipped.push({ tree: options.tree, path: file, why: info.isFIFO() ? 'a FIFO (never opened on the host)' : 'a socket or device' });
  }
}

async function readFile(dir: PinnedDir, name: string, file: string, base: Omit<Entry, 'type'>, seen: Stats, state: WalkState, options: ReadTreeOptions): Promise<Entry | undefined> {
  const where = whereOf(file, options);
  const handle = await open(dir.at(name), FILE_FLAGS).catch(() => undefined);
  if (!handle) {
    if (options.layer) throw new NotPlainError(`${file} was swapped for a link or removed while read`);
    options.skipped.push({ tree: options.tree, path: file, why: 'swapped for a link or removed while read' });
    return undefined;
  }
  try {
    const info = await handle.stat({ bigint: true });
    if (!info.isFile() || Number(info.ino) !== seen.ino) {
      if (options.layer) throw new NotPlainError(`${file} was swapped while read`);
      options.skipped.push({ tree: options.tree, path: file, why: 'swapped for a FIFO or device while read (never read)' });
      return undefined;
    }
    const size = Number(info.size);
    options.budget.content(where, size);
    const mode = Number(info.mode) & (options.layer ? 0o7777 : HOST_MODE_MASK);
    // Every field that changes with the content; ctime cannot be set back from inside the container.
    const settled = Number(info.ctimeMs) < state.started - RACY_MS;
    const stamp = settled ? `${options.stampPrefix ?? ''}${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}` : undefined;
    const before = options.previous?.get(file);
    if (stamp !== undefined && before?.type === 'file' && before.stamp === stamp && before.digest && (await options.sink.reuse(before.digest))) {
      options.budget.unread++;
      return { ...base, mode, type: 'file', size, digest: before.digest, stamp };
    }
    const stored = await options.sink.put(chunksOf(handle, options.cutGrowth ? size : size + 1), size, where);
    return { ...base, mode, type: 'file', size: stored.size, digest: stored.digest, ...(stamp === undefined ? {} : { stamp }) };
  } finally {
    await handle.close();
  }
}
