import { createHash } from 'node:crypto';
import { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import type { Instance } from '../../config/instance.js';
import { CodedError } from '../../errors.js';
import { kindOfUntrusted, listUntrusted, openUntrustedFile, readUntrustedText, relativeInside } from '../../util/untrusted-fs.js';
import { packageRoot } from '../../util/package-root.js';

/**
 * The build context: the agent's `system/container/` (or the built-in default). The agent can
 * write that folder while the host reads it, so every file is listed, hashed and packed through
 * untrusted-fs (no link followed at any component, regular files only), and the host sends the
 * engine a tar it made itself: nothing the engine receives was read through a planted link.
 */

/** The built-in Containerfile, used when the data repo has none. */
export const DEFAULT_CONTAINERFILE = path.join(packageRoot(), 'assets', 'Containerfile.default');

/** What gets sent to the engine: a folder, the files in it, and which one is the Containerfile. */
export interface BuildContext {
  /** The trusted folder the context hangs from (the data directory, or the folder of a built-in context). */
  root: string;
  /** The context folder (absolute; for messages). */
  dir: string;
  /** Relative to dir, sorted. */
  files: string[];
  containerfile: string;
  /** True when this is the built-in default. */
  builtIn: boolean;
}

/** A context made of a trusted folder's own files (the built-in default, the egress proxy). */
export function trustedContext(dir: string, files: string[], containerfile: string): BuildContext {
  return { root: dir, dir, files, containerfile, builtIn: true };
}

function relOf(context: BuildContext, file: string): string {
  const full = path.join(context.dir, file);
  return full === context.root ? '' : relativeInside(context.root, full);
}

async function listFiles(context: Omit<BuildContext, 'files'>, prefix = ''): Promise<string[]> {
  const entries = (await listUntrusted(context.root, relOf({ ...context, files: [] }, prefix))) ?? [];
  const files: string[] = [];
  for (const entry of entries) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.kind === 'dir') files.push(...(await listFiles(context, rel)));
    else if (entry.kind === 'file') files.push(rel);
    else {
      // The container can plant a link to a host file here: the build would send its content to the engine.
      throw new CodedError('CONFIG_REFUSED', `${path.join(context.dir, rel)} is a symbolic link or special file; the build context takes regular files only. Replace it with a copy of what it points to.`, {
        details: { file: path.join(context.dir, rel) },
      });
    }
  }
  return files.sort();
}

/** `<data>/system/container/` when it holds a Containerfile, else the built-in default. */
export async function buildContext(instance: Instance): Promise<BuildContext> {
  const root = instance.paths.root;
  if ((await kindOfUntrusted(root, relativeInside(root, instance.paths.containerfile))) !== undefined) {
    const own = { root, dir: instance.paths.containerContext, containerfile: path.basename(instance.paths.containerfile), builtIn: false };
    return { ...own, files: await listFiles(own) };
  }
  return trustedContext(path.dirname(DEFAULT_CONTAINERFILE), [path.basename(DEFAULT_CONTAINERFILE)], path.basename(DEFAULT_CONTAINERFILE));
}

/** Open one file of the context (regular, no link on the way) for `use`; a file gone meanwhile is an error. */
async function withContextFile<T>(context: BuildContext, rel: string, use: (handle: FileHandle, size: number, mode: number) => Promise<T>): Promise<T> {
  const result = await openUntrustedFile(context.root, relOf(context, rel), async (handle, size, mode) => ({ value: await use(handle, size, mode) }));
  if (result === undefined) throw new CodedError('CONFIG_REFUSED', `${path.join(context.dir, rel)} disappeared while the build context was read. Try again.`);
  return result.value;
}

/** The Containerfile's text (for its FROM lines). */
export async function readContainerfile(context: BuildContext): Promise<string> {
  const text = await readUntrustedText(context.root, relOf(context, context.containerfile));
  if (text === undefined) throw new CodedError('CONFIG_REFUSED', `${path.join(context.dir, context.containerfile)} disappeared. Try again.`);
  return text;
}

/** sha256 over every file's path, executable bit and content: any change means a new image. */
export async function contextHash(context: BuildContext): Promise<string> {
  const hash = createHash('sha256');
  for (const rel of context.files) {
    await withContextFile(context, rel, async (handle, size, mode) => {
      // The built-in file is hashed under the name the build uses, so moving it does not matter.
      hash.update(`${rel === context.containerfile ? 'Containerfile' : rel}\0${mode & 0o111 ? 'x' : '-'}\0`);
      if (size > 0) for await (const chunk of handle.createReadStream({ start: 0, end: size - 1, autoClose: false })) hash.update(chunk as Buffer);
      hash.update('\0');
    });
  }
  return hash.digest('hex');
}

/**
 * The context as a tar stream, each file read through its pinned folder (never a path the engine or tar would resolve).
 * `containerfile`: the Containerfile's text as the caller read and checked it, packed instead of reading the file again
 * (the agent may have changed it since).
 */
export function packContext(context: BuildContext, containerfile?: string): NodeJS.ReadableStream {
  const pack = tar.pack();
  void (async () => {
    for (const rel of context.files) {
      if (rel === context.containerfile && containerfile !== undefined) {
        pack.entry({ name: rel, mode: 0o644, mtime: new Date(0), type: 'file' }, containerfile);
        continue;
      }
      await withContextFile(context, rel, async (handle, size, mode) => {
        const entry = pack.entry({ name: rel, size, mode: mode & 0o777, mtime: new Date(0), type: 'file' });
        if (size > 0) await pipeline(handle.createReadStream({ start: 0, end: size - 1, autoClose: false }), entry);
        else entry.end();
      });
    }
    pack.finalize();
  })().catch((error: unknown) => pack.destroy(error instanceof Error ? error : new Error(String(error))));
  return pack;
}
