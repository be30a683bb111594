import { notOnRemoteEngine } from '../sandbox/container/agent-files-for.js';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Instance } from '../config/instance.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { containerName } from '../sandbox/container/container.js';
import { type Engine, connectEngine, engineSetting, inspectNamed } from '../sandbox/engine/engine.js';
import { LABEL } from '../sandbox/engine/image.js';
import { Budget, type SnapshotLimits, limitsOf } from './budget.js';
import { readContainerTree } from './container-tree-read.js';
import { type Skipped, readHostTree } from './host-tree-read.js';
import { type Entry, type Manifest, ManifestShelf, type Trigger } from './manifest.js';
import { ObjectStore, storeSink } from './store.js';

/**
 * Taking a snapshot of an instance: its data directory, its container's changes from the image,
 * the host's record of its terminals (`sessions/`: which were open, their commands, folders and
 * scrollback; `private/ttys.json`: what the agent has seen) and the operator's instance file,
 * into the host-private store (`<state>/snapshots/`, 0700). The container is paused while it is
 * read, so the snapshot is of one moment and nothing in it moves meanwhile. The caller holds the
 * instance (hold.ts, or a tick's own lock): nothing in the container can start one.
 */

export interface TakeOptions {
  trigger: Trigger;
  note?: string | undefined;
  tick?: number | undefined;
  limits?: SnapshotLimits;
  logger?: Logger;
  /** Another engine than the instance's configured one (where the container runs). */
  engine?: Engine;
}

/** The folder of an instance's snapshots. */
export function snapshotRoot(instance: Pick<Instance, 'paths'>): string {
  return path.join(instance.paths.stateRoot, 'snapshots');
}

export function storeOf(instance: Pick<Instance, 'paths'>): { store: ObjectStore; shelf: ManifestShelf } {
  const root = snapshotRoot(instance);
  return { store: new ObjectStore(root), shelf: new ManifestShelf(root) };
}

/** `private/ttys.json` (`kernel/ttys.json` in a snapshot, old ones too), the one host file outside `sessions/` a snapshot keeps (the seen-record). */
export const SEEN_FILE = 'ttys.json';
const MAX_SEEN_BYTES = 16 * 1024 * 1024;

async function readHostState(instance: Instance, store: ObjectStore, budget: Budget, skipped: Skipped[]): Promise<Entry[]> {
  const sink = storeSink(store, budget);
  // The kernel keeps writing these while it runs: each file as it was when looked at.
  const sessions = await readHostTree(instance.paths.sessions, { tree: 'host', sink, budget, skipped, cutGrowth: true });
  const entries: Entry[] = [{ path: 'sessions', type: 'dir', mode: 0o755, uid: 0, gid: 0, size: 0, mtime: 0 }, ...sessions.map((e) => ({ ...e, path: `sessions/${e.path}` }))];
  const seen = await readFile(path.join(instance.paths.privateState, SEEN_FILE)).catch(() => undefined);
  if (seen && seen.length <= MAX_SEEN_BYTES) {
    const stored = await store.putBuffer(seen, `host:kernel/${SEEN_FILE}`, budget);
    entries.push({ path: `kernel/${SEEN_FILE}`, type: 'file', mode: 0o600, uid: 0, gid: 0, size: stored.size, mtime: 0, digest: stored.digest });
  }
  return entries;
}

async function withPaused<T>(engine: Engine, container: string, logger: Logger | undefined, read: () => Promise<T>): Promise<T> {
  const handle = engine.docker.getContainer(container);
  const paused = await handle.pause().then(
    () => true,
    (error: unknown) => {
      logger?.warn({ err: error }, `cannot pause ${container} for the snapshot (taken live): ${describeError(error)}`);
      return false;
    },
  );
  try {
    return await read();
  } finally {
    if (paused) await handle.unpause().catch((error: unknown) => logger?.error({ err: error }, `cannot unpause ${container}: ${describeError(error)}`));
  }
}

/** Take a snapshot of `instance`; returns its manifest (its id is `manifest.id`). */
export async function takeSnapshot(instance: Instance, options: TakeOptions): Promise<Manifest> {
  notOnRemoteEngine(instance, 'snapshots (they read and write the data directory as a folder of this machine)');
  const { store, shelf } = storeOf(instance);
  await store.ensure();
  const budget = new Budget(options.limits ?? limitsOf(instance.config.snapshots), store.root);
  const skipped: Skipped[] = [];
  const previous = (await shelf.all()).at(-1);
  const sink = storeSink(store, budget);
  const name = containerName(instance.name);
  const docker = instance.config.container.backend === 'host' ? undefined : (options.engine ?? (await connectEngine({ socket: engineSetting(instance.config.container) })));
  const info = docker ? await inspectNamed(docker, name) : undefined;

  const readAll = async () => {
    const data = await readHostTree(instance.dataDir, { tree: 'data', sink, budget, skipped, previous: new Map((previous?.data ?? []).map((e) => [e.path, e])) });
    // No container (suspended): its changes are those of the snapshot that removed it.
    const container =
      docker && info
        ? { ...(await readContainerTree(docker, info.Id, { sink, budget, skipped, previous: new Map((previous?.container.entries ?? []).map((e) => [e.path, e])) })), imageHash: info.Config.Labels?.[LABEL.imageHash] }
        : (previous?.container ?? { entries: [], deleted: [], replaced: [] });
    return { data, container };
  };
  const { data, container } = docker && info?.State.Running ? await withPaused(docker, info.Id, options.logger, readAll) : await readAll();
  const host = await readHostState(instance, store, budget, skipped);
  const operator = await readFile(instance.paths.operatorConfig).catch(() => undefined);
  const operatorConfig = operator ? (await store.putBuffer(operator, 'operator configuration', budget)).digest : undefined;
  return shelf.add({
    instance: instance.name,
    createdAt: new Date().toISOString(),
    trigger: options.trigger,
    ...(options.tick === undefined ? {} : { tick: options.tick }),
    ...(options.note === undefined ? {} : { note: options.note }),
    data,
    container,
    host,
    ...(operatorConfig ? { operatorConfig } : {}),
    skipped,
    bytes: budget.bytes,
    newBytes: budget.newBytes,
    unread: budget.unread,
  });
}
