import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { CodedError, describeError } from '../errors.js';
import type { Engine } from '../sandbox/engine/engine.js';
import type { Entry } from './manifest.js';
import type { ObjectStore } from './store.js';

/**
 * Putting a snapshot's container changes into a fresh container made from the instance's image:
 * first the paths the snapshot had deleted, and those it had added whole, are removed inside
 * the container (an exec of `rm -rf` there: what the container holds is its own business), then
 * every entry goes in one tar stream through the engine's `putArchive` at `/`. Nothing is written
 * on the host; set-uid bits land only inside the container.
 */

export interface ContainerChanges {
  entries: readonly Entry[];
  deleted: readonly string[];
  replaced: readonly string[];
}

/** Paths per `rm` (well under the kernel's argument limit). */
const RM_BATCH = 256;

async function removeInside(engine: Engine, container: string, paths: readonly string[]): Promise<void> {
  for (let from = 0; from < paths.length; from += RM_BATCH) await removeBatch(engine, container, paths.slice(from, from + RM_BATCH));
}

async function removeBatch(engine: Engine, container: string, paths: readonly string[]): Promise<void> {
  const absolute = paths.map((p) => `/${p}`);
  const exec = await engine.docker.getContainer(container).exec({ Cmd: ['rm', '-rf', '--', ...absolute], User: '0', AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  stream.resume();
  await new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
  const { ExitCode: code } = await exec.inspect();
  if (code !== 0) throw new CodedError('CONTAINER_FAILED', `Cannot clear the paths the snapshot replaces in ${container} (rm exited ${String(code)}).`);
}

/**
 * A remapping Docker gives owners in `getArchive` as the host's ids (the container's root is
 * 100000) but reads those of `putArchive` as the container's, and refuses one it cannot map
 * ("Container ID 101234 cannot be mapped to a host ID"): the host ids of a snapshot are taken back
 * by the remap's first id, which its root folder names (`/var/lib/docker/100000.100000`).
 */
export async function remapOffset(engine: Engine): Promise<number> {
  if (engine.name !== 'docker') return 0;
  const root = ((await engine.docker.info()) as { DockerRootDir?: string }).DockerRootDir ?? '';
  const remap = /\/(\d+)\.(\d+)$/.exec(root);
  return remap && remap[1] === remap[2] ? Number(remap[1]) : 0;
}

function headerOf(entry: Entry, offset: number): tar.Headers {
  const inside = (id: number) => (id >= offset ? id - offset : id);
  const common = { name: entry.path, mode: entry.mode, uid: inside(entry.uid), gid: inside(entry.gid), mtime: new Date(entry.mtime * 1000) };
  switch (entry.type) {
    case 'file':
      return { ...common, type: 'file', size: entry.size };
    case 'dir':
      return { ...common, type: 'directory' };
    case 'symlink':
      return { ...common, type: 'symlink', linkname: entry.target ?? '' };
    case 'hardlink':
      return { ...common, type: 'link', linkname: entry.target ?? '' };
    case 'fifo':
      return { ...common, type: 'fifo' };
  }
}

/** The tar stream of `entries`, their content read from the store. */
function archiveOf(entries: readonly Entry[], store: ObjectStore, offset: number): Readable {
  const pack = tar.pack();
  void (async () => {
    try {
      for (const entry of entries) {
        const header = headerOf(entry, offset);
        if (entry.type !== 'file') {
          await new Promise<void>((resolve, reject) => pack.entry(header, (error) => (error ? reject(error) : resolve())));
          continue;
        }
        if (entry.digest === undefined) throw new CodedError('SNAPSHOT_MISMATCH', `The snapshot's /${entry.path} has no digest: its manifest is damaged.`);
        const content = await store.read(entry.digest);
        let finished: () => void = () => undefined;
        let failed: (error: Error) => void = () => undefined;
        const written = new Promise<void>((resolve, reject) => {
          finished = resolve;
          failed = reject;
        });
        const sink = pack.entry(header, (error) => (error ? failed(error) : finished()));
        await pipeline(content, sink);
        await written;
      }
      pack.finalize();
    } catch (error) {
      pack.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  })();
  return pack as unknown as Readable;
}

export async function writeContainerTree(engine: Engine, container: string, changes: ContainerChanges, store: ObjectStore): Promise<void> {
  await removeInside(engine, container, [...changes.deleted, ...changes.replaced]);
  if (changes.entries.length === 0) return;
  try {
    await engine.docker.getContainer(container).putArchive(archiveOf(changes.entries, store, await remapOffset(engine)), { path: '/' });
  } catch (error) {
    throw new CodedError('CONTAINER_FAILED', `Cannot put the snapshot's files into ${container}: ${describeError(error)}`, { cause: error });
  }
}
