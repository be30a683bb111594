import { constants } from 'node:fs';
import { type FileHandle, lstat, open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { type PinnedDir, describeOpenError, refused, relativeInside, splitName, withUntrustedDir } from './untrusted-dir.js';

/**
 * Reading files the container can write (the data directory) without trusting them:
 * no link is followed at any component (untrusted-dir.ts), only regular files are read (a
 * FIFO or device is refused without blocking), and never more than a size limit.
 * Host-private files (the state directory) are read the same way: one way to read a file.
 */

const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** 1 MiB: enough for any JSON config, prompt or message the host reads. */
export const DEFAULT_MAX_BYTES = 1024 * 1024;

export { relativeInside } from './untrusted-dir.js';

/** Open `name` in a pinned folder as a regular file; undefined when missing. */
async function openRegular(dir: PinnedDir, name: string, file: string): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(dir.at(name), FILE_FLAGS);
  } catch (error) {
    const problem = describeOpenError(error, file);
    if (problem) throw problem;
    return undefined;
  }
  const info = await handle.stat();
  if (!info.isFile()) {
    await handle.close();
    throw refused(file, 'is not a regular file (a FIFO, device, socket or folder)', 'Replace it with a regular file.');
  }
  return handle;
}

/** Run `use` on the regular file `<root>/<rel>`, opened without following any link; undefined when missing. */
export async function openUntrustedFile<T>(root: string, rel: string, use: (handle: FileHandle, size: number, mode: number, file: string) => Promise<T>): Promise<T | undefined> {
  const file = path.join(root, rel);
  const { dir, name } = splitName(rel, file);
  const handle = await withUntrustedDir(root, dir, {}, (pinned) => openRegular(pinned, name, file));
  if (!handle) return undefined;
  try {
    const info = await handle.stat();
    return await use(handle, info.size, info.mode & 0o7777, file);
  } finally {
    await handle.close();
  }
}

async function readInto(handle: FileHandle, buffer: Buffer, from: number): Promise<number> {
  let length = 0;
  while (length < buffer.length) {
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, from + length);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return length;
}

export interface UntrustedReadOptions {
  /** Larger files are refused. Default DEFAULT_MAX_BYTES. */
  maxBytes?: number;
}

export interface UntrustedFile {
  data: Buffer;
  /** Permission bits of the file that was read (the executable bit matters for builds). */
  mode: number;
}

/**
 * Read `<root>/<rel>` as untrusted input; undefined when it (or a folder on the way) does not exist.
 * Throws UNTRUSTED_FILE for a link anywhere on the path, a non-regular file, or one over the limit.
 */
export async function readUntrusted(root: string, rel: string, options: UntrustedReadOptions = {}): Promise<UntrustedFile | undefined> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  return openUntrustedFile(root, rel, async (handle, size, mode, file) => {
    if (size > maxBytes) throw refused(file, `is ${size} bytes, over the ${maxBytes}-byte limit`, 'Make it smaller.');
    // Read at most one byte past the limit: a file growing after fstat is still caught.
    const buffer = Buffer.alloc(Math.min(size, maxBytes) + 1);
    const length = await readInto(handle, buffer, 0);
    if (length > maxBytes) throw refused(file, `grew past the ${maxBytes}-byte limit while being read`, 'Make it smaller.');
    return { data: buffer.subarray(0, length), mode };
  });
}

/** The same, as UTF-8 text. */
export async function readUntrustedText(root: string, rel: string, options: UntrustedReadOptions = {}): Promise<string | undefined> {
  return (await readUntrusted(root, rel, options))?.data.toString('utf8');
}

/** `readUntrustedText` for an absolute `file` inside `root`. */
export async function readUntrustedFileText(root: string, file: string, options: UntrustedReadOptions = {}): Promise<string | undefined> {
  return readUntrustedText(root, relativeInside(root, file), options);
}

/**
 * Bytes [from, from+maxBytes) of `<root>/<rel>` and its size now, for files that grow (logs,
 * recordings, events) and are read in pieces; undefined when missing.
 */
export async function readUntrustedRange(root: string, rel: string, options: { from?: number; maxBytes: number }): Promise<{ data: Buffer; size: number } | undefined> {
  return openUntrustedFile(root, rel, async (handle, size) => {
    const from = Math.max(0, Math.min(options.from ?? 0, size));
    const data = Buffer.alloc(Math.max(0, Math.min(options.maxBytes, size - from)));
    const length = await readInto(handle, data, from);
    return { data: data.subarray(0, length), size };
  });
}

/** The last `maxBytes` of `<root>/<rel>` as text, whole lines only (a torn first line is dropped). */
export async function readUntrustedTail(root: string, rel: string, maxBytes: number): Promise<string | undefined> {
  return openUntrustedFile(root, rel, async (handle, size) => {
    const from = Math.max(0, size - maxBytes);
    const data = Buffer.alloc(size - from);
    const text = data.subarray(0, await readInto(handle, data, from)).toString('utf8');
    return from > 0 ? text.slice(text.indexOf('\n') + 1) : text;
  });
}

export interface UntrustedEntry {
  name: string;
  /** What the entry itself is (a link is never followed to find out more). */
  kind: 'file' | 'dir' | 'link' | 'other';
  /** Its permission bits. */
  mode: number;
}

function kindOf(info: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): UntrustedEntry['kind'] {
  return info.isFile() ? 'file' : info.isDirectory() ? 'dir' : info.isSymbolicLink() ? 'link' : 'other';
}

export interface ListOptions {
  /** Names to look at (the rest are not examined). */
  readonly accept?: (name: string) => boolean;
  /** Only entries of this kind. */
  readonly kind?: UntrustedEntry['kind'];
  /** At most this many entries, the first by name: a folder the agent filled with thousands costs one readdir and this many lstats. */
  readonly limit?: number;
}

/**
 * The entries of the folder `<root>/<rel>` (not following links on the way or inside; FIFOs,
 * sockets and devices are 'other'), sorted by name; undefined when it does not exist.
 * An entry that vanishes while listed is left out.
 */
export async function listUntrusted(root: string, rel: string, options: ListOptions = {}): Promise<UntrustedEntry[] | undefined> {
  return withUntrustedDir(root, rel, {}, async (dir) => {
    const entries: UntrustedEntry[] = [];
    const names = (await readdir(dir.self)).filter((name) => options.accept?.(name) ?? true).sort();
    for (const name of names) {
      if (entries.length >= (options.limit ?? Infinity)) break;
      const info = await lstat(dir.at(name)).catch(() => undefined);
      if (info && (options.kind === undefined || kindOf(info) === options.kind)) entries.push({ name, kind: kindOf(info), mode: info.mode & 0o7777 });
    }
    return entries;
  });
}

/**
 * Only the names in the folder `<root>/<rel>` (nothing is examined: cheap for a folder the agent
 * filled with thousands of files), sorted; undefined when it does not exist.
 */
export async function listUntrustedNames(root: string, rel: string): Promise<string[] | undefined> {
  return withUntrustedDir(root, rel, {}, async (dir) => (await readdir(dir.self)).sort());
}

/** What `<root>/<rel>` is, without following a link anywhere; undefined when missing. */
export async function kindOfUntrusted(root: string, rel: string): Promise<{ kind: UntrustedEntry['kind']; mode: number } | undefined> {
  const file = path.join(root, rel);
  const { dir, name } = splitName(rel, file);
  return withUntrustedDir(root, dir, {}, async (pinned) => {
    const info = await lstat(pinned.at(name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw refused(file, `cannot be examined (${error.code ?? String(error)})`, 'Check the file.', error);
    });
    if (!info) return undefined;
    return { kind: kindOf(info), mode: info.mode & 0o7777 };
  });
}
