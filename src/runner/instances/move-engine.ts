import { lchown } from 'node:fs/promises';
import { type Instance, resolveInstance } from '../../config/instance.js';
import { readConfigFiles } from '../../config/operator-config.js';
import { CodedError, describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { containerDown } from '../../sandbox/container/container.js';
import { type Engine, connectEngine, describeEngine, engineSetting } from '../../sandbox/engine/engine.js';
import { type HostIdRange, engineBoundary, instanceBoundary } from '../../sandbox/container/user-namespace.js';
import { holdInstance } from '../../snapshot/hold.js';
import type { Entry, Manifest } from '../../snapshot/manifest.js';
import { type RestoreReport, restoreSnapshot } from '../../snapshot/restore.js';
import { storeOf, takeSnapshot } from '../../snapshot/take.js';
import { writeFileAtomic } from '../../util/atomic-write.js';

/**
 * Moving an instance to another engine (`kernel-runner move NAME --engine E`), holding it all the
 * while (no tick, no kernel: hold.ts): a snapshot on the engine it runs on, its container (and
 * egress link) removed there, `container.engine` set in the operator's file, then the snapshot
 * restored on the new engine (a fresh container from the instance's image, built there; the data
 * directory and the container's changes checked against every digest) and the container started.
 * The terminals cannot move: the next kernel reports each lost to the restart, its scrollback kept.
 * A restore that fails puts the operator's file back as it was; the snapshot brings the instance
 * up on its old engine (kernel-runner rollback).
 */

export interface MoveOptions {
  logger: Logger;
  onProgress?: (line: string) => void;
  /** Called when the move failed after the old container was removed (the caller pauses the instance). */
  onFailed?: (error: unknown, snapshot: string) => Promise<void>;
}

export interface MoveReport extends RestoreReport {
  from: string;
  to: string;
}

/** The operator's file with `container.engine` set to `engine` (its former name dropped: one setting). */
async function setEngine(instance: Instance, engine: string): Promise<{ file: string; before: string }> {
  const { operator } = await readConfigFiles(instance.name, instance.dataDir);
  const raw = (typeof operator.raw === 'object' && operator.raw !== null && !Array.isArray(operator.raw) ? operator.raw : {}) as Record<string, unknown>;
  const container = typeof raw.container === 'object' && raw.container !== null && !Array.isArray(raw.container) ? (raw.container as Record<string, unknown>) : {};
  const { engine_socket: _former, ...rest } = container;
  const updated = { ...raw, container: { ...rest, engine } };
  const before = `${JSON.stringify(operator.raw ?? {}, null, 2)}\n`;
  await writeFileAtomic(operator.file, `${JSON.stringify(updated, null, 2)}\n`, 0o600);
  return { file: operator.file, before };
}

/** Where container uid 0 is on an engine's host, as its archive API and the data directory show ids: a remapping Docker's range, else 0. */
async function idBase(engine: Engine, instance: Instance): Promise<HostIdRange> {
  const boundary = await engineBoundary(engine);
  const remapped = instanceBoundary(instance.config.container, boundary) === 'userns-remap' && boundary.hostIds;
  return remapped || { uid: 0, gid: 0, size: 65536 };
}

/** An id of one engine's range as the other's (container uid u stays container uid u). */
function shiftId(id: number, from: number, to: number, size: number): number {
  const inContainer = id >= from && id < from + size ? id - from : id;
  return inContainer < size ? inContainer + to : inContainer;
}

/**
 * The snapshot with its owners as the new engine shows them (a remapping Docker's root is host uid
 * 100000, rootful Podman's is 0), saved as a snapshot of its own: the restore checks every owner
 * against it. Undefined when both engines agree.
 */
async function withOwnersOf(instance: Instance, manifest: Manifest, from: HostIdRange, to: HostIdRange, target: string): Promise<Manifest | undefined> {
  if (from.uid === to.uid && from.gid === to.gid) return undefined;
  const size = Math.min(from.size, to.size);
  const shift = (entry: Entry): Entry => ({ ...entry, uid: shiftId(entry.uid, from.uid, to.uid, size), gid: shiftId(entry.gid, from.gid, to.gid, size) });
  const { id: _id, version: _version, ...draft } = manifest;
  return storeOf(instance).shelf.add({
    ...draft,
    note: `snapshot ${manifest.id} with its owners as ${target} shows them (the move restores this one)`,
    data: manifest.data.map(shift),
    container: { ...manifest.container, entries: manifest.container.entries.map(shift) },
    newBytes: 0,
  });
}

/** Move `instance` to the engine `target` (`docker`, `podman`, or an address). */
export async function moveInstance(instance: Instance, target: string, options: MoveOptions): Promise<MoveReport> {
  const { logger, onProgress } = options;
  if (instance.config.container.backend === 'host') {
    throw new CodedError('CONFIG_REFUSED', `${instance.name} runs on this machine (container.backend "host"): it has no engine to move from.`);
  }
  const from = await connectEngine({ socket: engineSetting(instance.config.container) });
  const to: Engine = await connectEngine({ socket: target });
  if (from.address === to.address) {
    throw new CodedError('CONFIG_REFUSED', `${instance.name} already runs on ${describeEngine(to)}: nothing to move.`, { details: { engine: to.address } });
  }
  const hold = await holdInstance(instance, { restore: true, logger });
  try {
    onProgress?.(`taking a snapshot on ${from.name} (${from.address})`);
    const saved = await takeSnapshot(instance, { trigger: 'before-move', note: `before moving to ${target}`, logger, engine: from });
    onProgress?.(`removing the container from ${from.name}`);
    await containerDown(from, instance, { logger, ...(onProgress ? { onProgress } : {}) });
    const fromIds = await idBase(from, instance);
    const written = await setEngine(instance, target);
    onProgress?.(`container.engine is now "${target}" in ${written.file}`);
    try {
      const moved = await resolveInstance(instance.name);
      const toIds = await idBase(to, moved);
      const restored = (await withOwnersOf(moved, saved, fromIds, toIds, to.name)) ?? saved;
      // The data directory itself (the mount point: not in the snapshot) goes to the new engine's container root.
      if (process.getuid?.() === 0) await lchown(moved.dataDir, toIds.uid, toIds.gid);
      const report = await restoreSnapshot(moved, restored.id, { logger, engine: to, ...(onProgress ? { onProgress } : {}) });
      return { ...report, from: describeEngine(from), to: describeEngine(to) };
    } catch (error) {
      // Back where it was, on paper: the snapshot brings it up there (the caller says how and pauses it).
      await writeFileAtomic(written.file, written.before, 0o600).catch((e: unknown) => logger.error({ err: e }, `cannot put ${written.file} back: ${describeError(e)}`));
      await options.onFailed?.(error, saved.id);
      throw error;
    }
  } finally {
    await hold.release();
  }
}
