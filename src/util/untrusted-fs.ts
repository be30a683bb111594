import { constants } from 'node:fs';
import { type FileHandle, open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { KernelError } from '../errors.js';

/**
 * Reading files the container can write (the data directory) without trusting them:
 * no link is followed at any component, only regular files are read (a FIFO or device
 * is refused without blocking), and never more than a size limit. Each step opens
 * the next component relative to the directory already open (through /proc/self/fd,
 * Linux's openat), so a link swapped in after a check changes nothing.
 * `root` itself is trusted (the operator named it); `rel` is the untrusted part.
 */

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** 1 MiB: enough for any JSON config, prompt or message the host reads. */
export const DEFAULT_MAX_BYTES = 1024 * 1024;

function refused(file: string, why: string, next: string, cause?: unknown): KernelError {
  return new KernelError('UNTRUSTED_FILE', `${file}: ${why}. ${next}`, { details: { file }, ...(cause ? { cause } : {}) });
}

function componentsOf(rel: string, file: string): string[] {
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) throw refused(file, 'the path climbs out with ".."', 'Use a path inside the data directory.');
  return parts;
}

/** Where `name` is, relative to an open directory: the kernel resolves /proc/self/fd/N to that very directory. */
function at(dir: FileHandle, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

function describeOpenError(error: unknown, file: string): KernelError | undefined {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return undefined;
  if (code === 'ELOOP' || code === 'ENOTDIR') {
    return refused(file, 'a symbolic link (or a non-directory) is on the way, and links in the data directory are never followed', 'Replace the link with a regular file or folder.', error);
  }
  return refused(file, `cannot be opened (${code ?? String(error)})`, 'Check the file.', error);
}

/** Open `rel` under `root` as a directory, component by component; undefined when missing. */
async function openDir(root: string, parts: readonly string[], file: string): Promise<FileHandle | undefined> {
  let dir: FileHandle;
  try {
    dir = await open(root, DIR_FLAGS);
  } catch (error) {
    const problem = describeOpenError(error, file);
    if (problem) throw problem;
    return undefined;
  }
  for (const part of parts) {
    let next: FileHandle;
    try {
      next = await open(at(dir, part), DIR_FLAGS);
    } catch (error) {
      await dir.close();
      const problem = describeOpenError(error, file);
      if (problem) throw problem;
      return undefined;
    }
    await dir.close();
    dir = next;
  }
  return dir;
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
  const file = path.join(root, rel);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const parts = componentsOf(rel, file);
  const name = parts.pop();
  if (name === undefined) throw refused(file, 'is the data directory itself, not a file', 'Name a file.');
  const dir = await openDir(root, parts, file);
  if (!dir) return undefined;
  let handle: FileHandle;
  try {
    handle = await open(at(dir, name), FILE_FLAGS);
  } catch (error) {
    const problem = describeOpenError(error, file);
    if (problem) throw problem;
    return undefined;
  } finally {
    await dir.close();
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw refused(file, 'is not a regular file (a FIFO, device, socket or folder)', 'Replace it with a regular file.');
    if (info.size > maxBytes) throw refused(file, `is ${info.size} bytes, over the ${maxBytes}-byte limit`, 'Make it smaller.');
    // Read at most one byte past the limit: a file growing after fstat is still caught.
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) throw refused(file, `grew past the ${maxBytes}-byte limit while being read`, 'Make it smaller.');
    return { data: buffer.subarray(0, length), mode: info.mode & 0o7777 };
  } finally {
    await handle.close();
  }
}

/** The same, as UTF-8 text. */
export async function readUntrustedText(root: string, rel: string, options: UntrustedReadOptions = {}): Promise<string | undefined> {
  return (await readUntrusted(root, rel, options))?.data.toString('utf8');
}

export interface UntrustedEntry {
  name: string;
  kind: 'file' | 'dir' | 'other';
}

/**
 * The entries of the folder `<root>/<rel>` (not following links on the way; links and
 * other special files inside are reported as 'other'); undefined when it does not exist.
 */
export async function listUntrusted(root: string, rel: string): Promise<UntrustedEntry[] | undefined> {
  const file = path.join(root, rel);
  const dir = await openDir(root, componentsOf(rel, file), file);
  if (!dir) return undefined;
  try {
    const entries = await readdir(`/proc/self/fd/${dir.fd}`, { withFileTypes: true });
    return entries
      .map((e) => ({ name: e.name, kind: e.isFile() ? ('file' as const) : e.isDirectory() ? ('dir' as const) : ('other' as const) }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } finally {
    await dir.close();
  }
}

/** `file` relative to `root`, for callers that hold absolute data-dir paths; throws when it is outside. */
export function relativeInside(root: string, file: string): string {
  const rel = path.relative(root, file);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
    throw refused(file, `is not inside ${root}`, 'Use a path inside the data directory.');
  }
  return rel;
}

/** `readUntrustedText` for an absolute `file` inside the data directory `root`. */
export async function readUntrustedFileText(root: string, file: string, options: UntrustedReadOptions = {}): Promise<string | undefined> {
  return readUntrustedText(root, relativeInside(root, file), options);
}
