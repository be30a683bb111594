import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type Dockerode from 'dockerode';
import tar from 'tar-stream';
import { CodedError, describeError } from '../errors.js';
import { type Engine, isRemoteEngine } from '../sandbox/engine/engine.js';
import type { Budget } from './budget.js';
import { type ChangePlan, type ChangeRoot, isUnder, mountPaths, planChanges } from './container-changes.js';
import type { ContentSink } from './store.js';
import { type LayerView, NotPlainError, type Skipped, readHostSubtree } from './host-tree-read.js';
import type { Entry } from './manifest.js';

/**
 * The container's changes from its image. `docker diff` says which paths changed
 * (container-changes.ts). On a local overlay2 Docker, each added subtree and each changed file is
 * then read from the container's upper layer on this host (upperLayerOf): a walk that follows no
 * link (host-tree-read.ts, the container writes that folder: hostile), and a file whose change
 * stamp (device, inode, size, mtime, ctime, this container) is the one the previous snapshot
 * recorded is not read again, so a second snapshot with nothing changed reads only metadata.
 * Everything else (another engine or driver, a remote engine, a folder only modified, anything in
 * the layer only the engine can interpret: a whiteout, a folder swapped while read) comes as a
 * tar stream from `getArchive`, parsed as hostile input: an entry naming a path outside the subtree
 * it was asked for is refused, sizes are counted in the budget before their content is read,
 * devices are left out. Nothing is ever extracted on the host: content goes to the store (or only
 * through sha256) under its digest. Set-uid bits are kept: they only ever go back into a container.
 */

export interface ContainerTree {
  entries: Entry[];
  deleted: string[];
  /** Added subtrees: restore clears these paths in the fresh container before putting them back. */
  replaced: string[];
}

export interface ReadContainerOptions {
  sink: ContentSink;
  budget: Budget;
  skipped: Skipped[];
  /** The previous snapshot's container entries: an unchanged file of the upper layer is not read again. */
  previous?: ReadonlyMap<string, Entry>;
  /** 'engine': everything through the engine's archives, even where the upper layer could be read. */
  via?: 'engine';
}

/**
 * The container's writable layer as a folder of this host. Its owners are the host's ids, as the
 * engine's archives give them too (a remapping Docker's container root is 100000 in both), so
 * manifests from either way are alike.
 */
export interface UpperLayer {
  dir: string;
  container: string;
}

/**
 * The container's upper layer, when this process can read it as Docker's overlay2 lays it out
 * (a local Docker, overlay2 without metacopy, this process root, the layer under the engine's
 * root folder); undefined otherwise.
 */
export async function upperLayerOf(engine: Engine, info: Dockerode.ContainerInspectInfo): Promise<UpperLayer | undefined> {
  if (isRemoteEngine(engine) || engine.name !== 'docker' || process.getuid?.() !== 0) return undefined;
  const dir = info.GraphDriver?.Name === 'overlay2' ? (info.GraphDriver.Data as Record<string, unknown>).UpperDir : undefined;
  if (typeof dir !== 'string' || !path.isAbsolute(dir)) return undefined;
  // Metacopy keeps a changed file's content in the image's layer: the upper layer is not whole.
  const metacopy = await readFile('/sys/module/overlay/parameters/metacopy', 'utf8').catch(() => 'unknown');
  if (metacopy.trim() !== 'N') return undefined;
  const root = ((await engine.docker.info()) as { DockerRootDir?: string }).DockerRootDir ?? '';
  if (root === '' || !dir.startsWith(`${root}/overlay2/`)) return undefined;
  const found = await lstat(dir).catch(() => undefined);
  if (!found?.isDirectory()) return undefined;
  return { dir, container: info.Id };
}

const LAYER_VIEW: LayerView = { where: (file) => `container:/${file}` };

/** One changed root from the upper layer; undefined when only the engine can say what it holds. */
async function readUpperRoot(layer: UpperLayer, root: ChangeRoot, options: ReadContainerOptions): Promise<Entry[] | undefined> {
  try {
    return await readHostSubtree(layer.dir, relative(root.path), {
      // A folder only modified holds its changed children in the layer, the rest in the image's.
      wholeFolder: root.added,
      tree: 'container',
      sink: options.sink,
      budget: options.budget,
      skipped: options.skipped,
      cutGrowth: true,
      layer: LAYER_VIEW,
      stampPrefix: `${layer.container.slice(0, 12)}:`,
      ...(options.previous ? { previous: options.previous } : {}),
    });
  } catch (error) {
    // What it counted stays counted: the engine's read counts it again (a refusal errs on the safe side).
    if (!(error instanceof NotPlainError)) throw error;
    return undefined;
  }
}

/** Archives fetched at once. */
const PARALLEL = 4;

export async function readContainerTree(engine: Engine, container: string, options: ReadContainerOptions): Promise<ContainerTree> {
  const handle = engine.docker.getContainer(container);
  const info = await handle.inspect();
  const changes = ((await handle.changes()) as Array<{ Path: string; Kind: number }> | null) ?? [];
  const plan: ChangePlan = planChanges(changes, mountPaths(info));
  const layer = options.via === 'engine' ? undefined : await upperLayerOf(engine, info);
  const results: Entry[][] = new Array<Entry[]>(plan.roots.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < plan.roots.length; index = next++) {
      const root = plan.roots[index] as ChangeRoot;
      results[index] = (layer ? await readUpperRoot(layer, root, options) : undefined) ?? (await readRoot(handle, root, options));
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, plan.roots.length) }, worker));
  return {
    entries: results.flat(),
    deleted: plan.deleted.map(relative),
    replaced: plan.roots.filter((root) => root.added).map((root) => relative(root.path)),
  };
}

/** `/usr/bin/x` → `usr/bin/x`: manifest paths are relative to the container's `/`. */
function relative(file: string): string {
  return file.replace(/^\/+/, '');
}

function typeOf(header: tar.Headers): Entry['type'] | undefined {
  switch (header.type) {
    case 'file':
    case 'contiguous-file':
      return 'file';
    case 'directory':
      return 'dir';
    case 'symlink':
      return 'symlink';
    case 'link':
      return 'hardlink';
    case 'fifo':
      return 'fifo';
    default:
      return undefined;
  }
}

/** An archive entry's name → its absolute path, or undefined when it leaves the subtree asked for. */
function placeOf(root: string, name: string): string | undefined {
  if (name.startsWith('/') || name.split('/').includes('..')) return undefined;
  const file = path.posix.join(path.posix.dirname(root), name).replace(/\/+$/, '');
  return isUnder(file, root) ? file : undefined;
}

async function readRoot(container: ReturnType<Engine['docker']['getContainer']>, root: ChangeRoot, options: ReadContainerOptions): Promise<Entry[]> {
  let stream: Readable;
  try {
    stream = (await container.getArchive({ path: root.path })) as unknown as Readable;
  } catch (error) {
    // Gone between the diff and the archive (the agent still at work): not in this snapshot.
    options.skipped.push({ tree: 'container', path: relative(root.path), why: `not readable (${describeError(error).split('\n')[0] ?? ''})` });
    return [];
  }
  const entries: Entry[] = [];
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, body, next) => {
      handleEntry(root, header, body, entries, options).then(
        () => next(),
        (error: unknown) => {
          body.resume();
          stream.destroy();
          extract.destroy();
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
    extract.on('finish', resolve);
    extract.on('error', (error) => reject(new CodedError('SNAPSHOT_REFUSED', `The engine's archive of ${root.path} is not a valid tar stream: ${describeError(error)}.`, { cause: error })));
    stream.on('error', reject);
  });
  stream.pipe(extract);
  await done;
  return entries;
}

async function handleEntry(root: ChangeRoot, header: tar.Headers, body: Readable, entries: Entry[], options: ReadContainerOptions): Promise<void> {
  const file = placeOf(root.path, header.name);
  const type = typeOf(header);
  if (file === undefined || type === undefined) {
    options.skipped.push({ tree: 'container', path: header.name, why: file === undefined ? 'an archive entry outside its folder (refused)' : `a ${header.type ?? 'special file'} (not kept)` });
    body.resume();
    return;
  }
  const where = `container:${file}`;
  options.budget.entry(where);
  const base = {
    path: relative(file),
    mode: (header.mode ?? 0) & 0o7777,
    uid: header.uid ?? 0,
    gid: header.gid ?? 0,
    size: 0,
    mtime: Math.floor((header.mtime?.getTime() ?? 0) / 1000),
  };
  if (type === 'file') {
    const size = header.size ?? 0;
    options.budget.content(where, size);
    const stored = await options.sink.put(body, size, where);
    entries.push({ ...base, type, size: stored.size, digest: stored.digest });
    return;
  }
  body.resume();
  if (type === 'symlink') {
    options.budget.content(where, Buffer.byteLength(header.linkname ?? ''));
    entries.push({ ...base, type, target: header.linkname ?? '' });
  } else if (type === 'hardlink') {
    const target = placeOf(root.path, header.linkname ?? '');
    if (target === undefined) {
      options.skipped.push({ tree: 'container', path: base.path, why: 'a hard link to a file outside its folder (refused)' });
      return;
    }
    entries.push({ ...base, type, target: relative(target) });
  } else {
    entries.push({ ...base, type });
  }
}
