import { notOnRemoteEngine } from '../sandbox/container/agent-files-for.js';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { Instance } from '../config/instance.js';
import { CodedError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { containerDown, containerName, containerUpInStages } from '../sandbox/container/container.js';
import { type Engine, connectEngine, engineSetting } from '../sandbox/engine/engine.js';
import { LABEL } from '../sandbox/engine/image.js';
import { readTerminalRegistry } from '../state/terminal-registry.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { Budget, DEFAULT_LIMITS } from './budget.js';
import { hashSink } from './store.js';
import { isUnder } from './container-changes.js';
import { readContainerTree } from './container-tree-read.js';
import { writeContainerTree } from './container-tree-write.js';
import { readHostTree } from './host-tree-read.js';
import { emptyHostTree, writeHostTree } from './host-tree-write.js';
import { type Manifest, digestsOf } from './manifest.js';
import type { ObjectStore } from './store.js';
import { SEEN_FILE, storeOf } from './take.js';
import { assertSame, compareTrees } from './verify.js';

/**
 * Restoring a snapshot into an instance: the container is removed (nothing writes the data
 * directory any more), the data directory is emptied and rebuilt from the store and checked
 * against the manifest's digests, a fresh container is made from the instance's image and the
 * saved changes put into it and checked the same way, then the host's record of the terminals is
 * put back. Processes cannot be saved: the kernel that starts next finds none of the terminals
 * its record lists and reports each as lost to a restart, with its scrollback kept, as after a
 * container restart. A difference anywhere stops the restore with SNAPSHOT_MISMATCH naming it.
 * The caller holds the instance (hold.ts): no tick and no kernel runs meanwhile.
 */

export interface RestoreOptions {
  logger: Logger;
  onProgress?: (line: string) => void;
  /** Called when the restore failed once the instance was changed (the caller pauses the instance). */
  onFailed?: (error: unknown) => Promise<void>;
  /** Where the container is made (default: the instance's configured engine). */
  engine?: Engine;
}

export interface RestoreReport {
  id: string;
  dataEntries: number;
  containerEntries: number;
  /** Terminals that were open when it was taken: lost to the restart, their scrollback kept. */
  terminals: string[];
  /** The container's changes were taken against another image than the one it has now. */
  imageChanged: boolean;
}

/** A manifest path must name an entry inside its tree: no '..', not absolute, nothing empty. */
function assertPaths(manifest: Manifest): void {
  const entries = [...manifest.data, ...manifest.container.entries, ...manifest.host];
  const paths = [...entries.map((e) => e.path), ...entries.flatMap((e) => (e.type === 'hardlink' && e.target !== undefined ? [e.target] : [])), ...manifest.container.deleted, ...manifest.container.replaced];
  const bad = paths.find((p) => p.startsWith('/') || p.split('/').some((part) => part === '' || part === '.' || part === '..'));
  if (bad !== undefined) throw new CodedError('SNAPSHOT_MISMATCH', `Snapshot ${manifest.id} cannot be restored: its manifest names ${JSON.stringify(bad)}, outside the tree it belongs to. Nothing was changed.`);
}

/** Before anything is removed: every path stays inside its tree, every object the manifest needs is in the store at its size. */
async function assertComplete(manifest: Manifest, store: ObjectStore): Promise<void> {
  assertPaths(manifest);
  const sizes = new Map<string, number>();
  for (const entry of [...manifest.data, ...manifest.container.entries, ...manifest.host]) if (entry.type === 'file' && entry.digest) sizes.set(entry.digest, entry.size);
  const missing: string[] = [];
  for (const digest of digestsOf(manifest)) {
    const info = await lstat(store.path(digest)).catch(() => undefined);
    const size = sizes.get(digest);
    if (!info?.isFile() || (size !== undefined && info.size !== size)) missing.push(digest.slice(0, 12));
  }
  if (missing.length > 0) {
    throw new CodedError('SNAPSHOT_MISMATCH', `Snapshot ${manifest.id} cannot be restored: ${missing.length} of its contents are missing or damaged in ${store.objects} (${missing.slice(0, 5).join(', ')}…). Nothing was changed.`);
  }
}

async function restoreData(instance: Instance, manifest: Manifest, store: ObjectStore, owners: boolean, onProgress?: (line: string) => void): Promise<void> {
  await emptyHostTree(instance.dataDir);
  await writeHostTree(instance.dataDir, manifest.data, store, { owners });
  onProgress?.('checking the data directory against the snapshot');
  const budget = new Budget({ ...DEFAULT_LIMITS, maxFiles: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER }, store.root);
  const restored = await readHostTree(instance.dataDir, { tree: 'data', sink: hashSink, budget, skipped: [] });
  assertSame('data directory', compareTrees(manifest.data, restored, { owners, extras: true }), `The data directory ${instance.dataDir} is left as restored; the instance must not tick until it is fixed (restore another snapshot).`);
}

async function restoreContainer(instance: Instance, manifest: Manifest, store: ObjectStore, engine: Engine, options: RestoreOptions): Promise<{ finished: Promise<unknown> }> {
  const stages = await containerUpInStages(engine, instance, { logger: options.logger, ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
  const name = containerName(instance.name);
  options.onProgress?.(`putting back ${manifest.container.entries.length} container changes`);
  await writeContainerTree(engine, name, manifest.container, store);
  options.onProgress?.('checking the container against the snapshot');
  const budget = new Budget({ ...DEFAULT_LIMITS, maxFiles: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER }, store.root);
  const now = await readContainerTree(engine, name, { sink: hashSink, budget, skipped: [] });
  const differences = compareTrees(manifest.container.entries, now.entries, { owners: true, extras: false });
  for (const gone of manifest.container.deleted) if (!now.deleted.some((d) => isUnder(`/${gone}`, `/${d}`))) differences.push(`/${gone}: present, was deleted`);
  assertSame('container', differences, `Its container ${name} is left as restored; remove it (agent-kernel container down ${instance.name}) before the instance ticks again.`);
  return { finished: stages.finished };
}

async function restoreHost(instance: Instance, manifest: Manifest, store: ObjectStore): Promise<string[]> {
  const sessions = manifest.host.filter((e) => e.path.startsWith('sessions/')).map((e) => ({ ...e, path: e.path.slice('sessions/'.length) }));
  await emptyHostTree(instance.paths.sessions);
  await writeHostTree(instance.paths.sessions, sessions, store, { owners: false });
  const seen = manifest.host.find((e) => e.path === `kernel/${SEEN_FILE}`);
  const seenFile = path.join(instance.paths.privateState, SEEN_FILE);
  if (seen?.digest) await writeFileAtomic(seenFile, await store.readBuffer(seen.digest), 0o600);
  const registry = await readTerminalRegistry(instance.paths.terminalRegistry).catch(() => undefined);
  return (registry?.ttys ?? []).map((t) => `tty ${t.tty}: ${t.command} (in ${t.dir})`);
}

/** Restore snapshot `id` into `instance` (the caller holds it); returns what was restored. */
export async function restoreSnapshot(instance: Instance, id: string, options: RestoreOptions): Promise<RestoreReport> {
  notOnRemoteEngine(instance, 'snapshots (they read and write the data directory as a folder of this machine)');
  const { store, shelf } = storeOf(instance);
  const manifest = await shelf.read(id);
  await assertComplete(manifest, store);
  const owners = process.getuid?.() === 0;
  const docker = instance.config.container.backend === 'host' ? undefined : (options.engine ?? (await connectEngine({ socket: engineSetting(instance.config.container) })));
  if (docker) {
    options.onProgress?.('removing the container');
    await containerDown(docker, instance, { logger: options.logger });
  }
  let imageChanged = false;
  try {
    options.onProgress?.(`restoring the data directory (${manifest.data.length} entries)`);
    await restoreData(instance, manifest, store, owners, options.onProgress);
    if (docker) {
      options.onProgress?.(`making a fresh container with ${manifest.container.entries.length} saved changes`);
      const { finished } = await restoreContainer(instance, manifest, store, docker, options);
      await finished;
      const info = await docker.docker.getContainer(containerName(instance.name)).inspect();
      imageChanged = manifest.container.imageHash !== undefined && info.Config.Labels?.[LABEL.imageHash] !== manifest.container.imageHash;
    }
  } catch (error) {
    // Half restored, or restored wrong: no tick may run on it until a person looks.
    await options.onFailed?.(error);
    throw error;
  }
  const terminals = await restoreHost(instance, manifest, store);
  return { id, dataEntries: manifest.data.length, containerEntries: manifest.container.entries.length, terminals, imageChanged };
}

/**
 * Only the container of snapshot `id` (resuming a suspended instance): a fresh container from
 * the instance's image with the saved changes put in and checked against their digests. The data
 * directory and the terminals' record stay as they are: nothing wrote them while it was suspended
 * but the operator. The caller holds the instance.
 */
export async function restoreContainerOnly(instance: Instance, id: string, options: RestoreOptions): Promise<RestoreReport> {
  const { store, shelf } = storeOf(instance);
  const manifest = await shelf.read(id);
  await assertComplete(manifest, store);
  const docker = options.engine ?? (await connectEngine({ socket: engineSetting(instance.config.container) }));
  await containerDown(docker, instance, { logger: options.logger });
  const { finished } = await restoreContainer(instance, manifest, store, docker, options);
  await finished;
  const registry = await readTerminalRegistry(instance.paths.terminalRegistry).catch(() => undefined);
  const terminals = (registry?.ttys ?? []).map((t) => `tty ${t.tty}: ${t.command} (in ${t.dir})`);
  return { id, dataEntries: 0, containerEntries: manifest.container.entries.length, terminals, imageChanged: false };
}
