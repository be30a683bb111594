import type { Dirent } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { CodedError, describeError } from '../../errors.js';
import type { Engine } from '../engine/engine.js';
import { type TarEntry, packTar } from './engine-tar.js';

/**
 * On a remote engine nothing of this machine can be bind-mounted, so a host-private folder the
 * container should see (the shell folder: the terminals' rcfile, `ak-mail`, the mail view) is
 * copied in instead, through `putArchive`: one way, host to container, never read back. The
 * copy is the agent's to change (it only changes its own shells); the host never trusts it.
 *
 * The source is host-private (the state directory, which the container cannot write): only its
 * folders and regular files go, at most MAX_FILES of them.
 */

const MAX_FILES = 200;
const MAX_BYTES = 4 * 1024 * 1024;

async function collect(source: string, prefix: string, into: TarEntry[]): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await readdir(source, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (into.length >= MAX_FILES) return;
    const name = `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      into.push({ name: `${name}/`, mode: 0o755 });
      await collect(path.join(source, entry.name), name, into);
    } else if (entry.isFile()) {
      const data = await readFile(path.join(source, entry.name));
      if (data.length <= MAX_BYTES) into.push({ name, data, mode: name.includes('/bin/') ? 0o755 : 0o644 });
    }
  }
}

/** Copy the host folder `source` to `target` in the container (an absolute path under `base`, which must exist there). */
export async function showFolderInContainer(engine: Engine, container: string, source: string, target: string, base: string): Promise<void> {
  const rel = path.posix.relative(base, target);
  if (rel === '' || rel.startsWith('..') || path.posix.isAbsolute(rel)) throw new CodedError('INTERNAL', `${target} is not under ${base}`);
  const entries: TarEntry[] = [];
  const parts = rel.split('/');
  for (let index = 1; index <= parts.length; index++) entries.push({ name: `${parts.slice(0, index).join('/')}/`, mode: 0o755 });
  await collect(source, rel, entries);
  const archive = await packTar(entries);
  try {
    await engine.docker.getContainer(container).putArchive(archive, { path: base });
  } catch (error) {
    throw new CodedError('CONTAINER_FAILED', `Cannot copy ${source} into ${container} at ${target} on ${engine.address}: ${describeError(error)}`, { cause: error });
  }
}
