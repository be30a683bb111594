import { type Stats, constants } from 'node:fs';
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { CodedError } from '../errors.js';

/**
 * The one way the host reaches into a folder the container can write (the data directory):
 * walk from a trusted root one component at a time, each opened O_DIRECTORY|O_NOFOLLOW
 * relative to the folder already open (through /proc/self/fd/N, Linux's openat), so no link
 * is followed at any component and a link swapped in after a check changes nothing. What is
 * then done to an entry (open, mkdir, rename, list) goes through the pinned folder's fd.
 * `root` itself is trusted (the operator named it); `rel` is the untrusted part.
 */

export const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

export function refused(file: string, why: string, next: string, cause?: unknown): CodedError {
  return new CodedError('UNTRUSTED_FILE', `${file}: ${why}. ${next}`, { details: { file }, ...(cause ? { cause } : {}) });
}

export function componentsOf(rel: string, file: string): string[] {
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) throw refused(file, 'the path climbs out with ".."', 'Use a path inside the data directory.');
  return parts;
}

/** ENOENT is "missing" (undefined); a link or non-folder on the way is a refusal that names the fix. */
export function describeOpenError(error: unknown, file: string): CodedError | undefined {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return undefined;
  if (code === 'ELOOP' || code === 'ENOTDIR') {
    return refused(file, 'a symbolic link (or a non-directory) is on the way, and links in the data directory are never followed', 'Replace the link with a regular file or folder.', error);
  }
  return refused(file, `cannot be opened (${code ?? String(error)})`, 'Check the file.', error);
}

/** A folder held open: entries are named through its fd, whatever happens to the path meanwhile. */
export class PinnedDir {
  constructor(
    private readonly handle: FileHandle,
    /** The folder's path as the caller named it (for messages only). */
    readonly file: string,
    /**
     * Who what the host creates here is given to: the data directory's own owner, when this
     * process is root and that is someone else (a remapped container root must own the files
     * `send` or `init` add, as it owns the rest: user-namespace.ts).
     */
    readonly newEntryOwner?: { uid: number; gid: number },
  ) {}

  /** Give a new entry (by its descriptor) to the data directory's owner; a no-op when that is this process. */
  async adopt(entry: FileHandle): Promise<void> {
    if (this.newEntryOwner) await entry.chown(this.newEntryOwner.uid, this.newEntryOwner.gid);
  }

  /** `name` inside this very folder: the kernel resolves /proc/self/fd/N to the open directory. */
  at(name: string): string {
    if (name === '' || name === '.' || name === '..' || name.includes('/')) throw refused(path.join(this.file, name), 'is not a plain file name', 'Name one entry of the folder.');
    return `/proc/self/fd/${this.handle.fd}/${name}`;
  }

  /** The folder itself (for readdir). */
  get self(): string {
    return `/proc/self/fd/${this.handle.fd}`;
  }

  /** The folder's own owner and mode (fstat: never a path). */
  stat(): Promise<Stats> {
    return this.handle.stat();
  }

  /** Give the folder itself to `uid`:`gid` (fchown: never a path). */
  chown(uid: number, gid: number): Promise<void> {
    return this.handle.chown(uid, gid);
  }

  /** Set the folder's own mode (fchmod: never a path). */
  chmod(mode: number): Promise<void> {
    return this.handle.chmod(mode);
  }

  /** Set the folder's own access and modification times, in seconds (futimes: never a path). */
  utimes(seconds: number): Promise<void> {
    return this.handle.utimes(seconds, seconds);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

async function openComponent(where: string, file: string, create: boolean, mode: number, owner: { uid: number; gid: number } | undefined): Promise<FileHandle | undefined> {
  try {
    return await open(where, DIR_FLAGS);
  } catch (error) {
    const problem = describeOpenError(error, file);
    if (problem) throw problem;
    if (!create) return undefined;
  }
  // mkdir never follows a link at the last component (EEXIST); the open after it refuses one.
  await mkdir(where, { mode }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw refused(file, `cannot be created (${error.code ?? String(error)})`, 'Check the folder.', error);
  });
  let made: FileHandle;
  try {
    made = await open(where, DIR_FLAGS);
  } catch (error) {
    throw describeOpenError(error, file) ?? refused(file, 'vanished while being created', 'Try again.', error);
  }
  if (owner) await made.chown(owner.uid, owner.gid);
  return made;
}

/** The data directory's owner, when this process is root and the owner is not (see PinnedDir.newEntryOwner). */
async function ownerToGive(root: FileHandle): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const { uid, gid } = await root.stat();
  return uid === 0 && gid === 0 ? undefined : { uid, gid };
}

export interface OpenDirOptions {
  /** Create missing folders (never through a link). Default false: a missing folder is undefined. */
  create?: boolean;
  /** Mode of folders created. Default 0o755. */
  mode?: number;
}

/**
 * Open `<root>/<rel>` as a folder, component by component, never following a link; undefined
 * when a folder on the way is missing (and `create` is not set). Throws UNTRUSTED_FILE for a
 * link or non-folder on the way. The caller closes it.
 */
export async function openUntrustedDir(root: string, rel: string, options: OpenDirOptions = {}): Promise<PinnedDir | undefined> {
  const file = path.join(root, rel);
  const parts = componentsOf(rel, file);
  const create = options.create === true;
  const mode = options.mode ?? 0o755;
  // The root is the operator's (a link the operator made there is theirs): it alone may be followed.
  if (create) await mkdir(root, { recursive: true, mode });
  let dir: FileHandle;
  try {
    dir = await open(root, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw refused(root, `cannot be opened as a folder (${(error as NodeJS.ErrnoException).code ?? String(error)})`, 'Check the data directory.', error);
  }
  const owner = await ownerToGive(dir);
  for (const part of parts) {
    let next: FileHandle | undefined;
    try {
      next = await openComponent(`/proc/self/fd/${dir.fd}/${part}`, file, create, mode, owner);
    } finally {
      await dir.close();
    }
    if (!next) return undefined;
    dir = next;
  }
  return new PinnedDir(dir, file, owner);
}

/** Run `use` on the pinned folder `<root>/<rel>` and close it; undefined when it is missing. */
export async function withUntrustedDir<T>(root: string, rel: string, options: OpenDirOptions, use: (dir: PinnedDir) => Promise<T>): Promise<T | undefined> {
  const dir = await openUntrustedDir(root, rel, options);
  if (!dir) return undefined;
  try {
    return await use(dir);
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

/** Split `rel` into its folder and last name; refuses the root itself. */
export function splitName(rel: string, file: string): { dir: string; name: string } {
  const parts = componentsOf(rel, file);
  const name = parts.pop();
  if (name === undefined) throw refused(file, 'is the folder itself, not a file', 'Name a file.');
  return { dir: parts.join('/'), name };
}
