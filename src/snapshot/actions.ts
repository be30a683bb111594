import type { Instance } from '../config/instance.js';
import { CodedError, describeError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { formatBytes } from './budget.js';
import { holdInstance } from './hold.js';
import type { Manifest } from './manifest.js';
import { applyRetention, removeSnapshots } from './prune.js';
import { type RestoreReport, restoreContainerOnly, restoreSnapshot } from './restore.js';
import { containerDown } from '../sandbox/container/container.js';
import { type SuspendRecord, readSuspended, removeSuspended, writeSuspended } from '../sandbox/container/suspended.js';
import { connectEngine, engineSetting } from '../sandbox/engine/engine.js';
import { storeOf, takeSnapshot } from './take.js';

/**
 * What the commands, a tick and watch do with snapshots, each holding the instance for its
 * time (hold.ts): take one now, take one before a tick, roll back, remove one. The building
 * blocks (takeSnapshot, restoreSnapshot) stay usable alone for a caller that holds the
 * instance itself (moving an instance to another engine).
 */

export async function snapshotNow(instance: Instance, options: { note?: string; logger?: Logger }): Promise<Manifest> {
  const hold = await holdInstance(instance, { restore: false, ...(options.logger ? { logger: options.logger } : {}) });
  try {
    return await takeSnapshot(instance, { trigger: 'manual', note: options.note, ...(options.logger ? { logger: options.logger } : {}) });
  } finally {
    await hold.release();
  }
}

/**
 * Before tick `tick`, under the tick's own lock: a snapshot, then the operator's retention. A
 * snapshot that fails or is refused is logged and the tick goes on (it says so in the log).
 */
export async function snapshotBeforeTick(instance: Instance, tick: number, logger: Logger): Promise<Manifest | undefined> {
  if (!instance.config.snapshots.before_tick) return undefined;
  const started = Date.now();
  try {
    const manifest = await takeSnapshot(instance, { trigger: 'before-tick', tick, logger });
    const removed = await applyRetention(instance);
    logger.info({ snapshot: manifest.id, tick, ms: Date.now() - started, newBytes: manifest.newBytes, removed: removed.ids }, `snapshot ${manifest.id} taken before tick ${tick} (${formatBytes(manifest.newBytes)} new)`);
    return manifest;
  } catch (error) {
    logger.warn({ err: error, tick }, `no snapshot before tick ${tick}: ${describeError(error)}`);
    return undefined;
  }
}

/** The snapshot `which` names: an id, `before-tick` N, or (neither) the newest. */
export async function findSnapshot(instance: Instance, which: { id?: string; beforeTick?: number }): Promise<Manifest> {
  const { shelf } = storeOf(instance);
  if (which.id !== undefined) return shelf.read(which.id);
  const all = await shelf.all();
  if (which.beforeTick !== undefined) {
    const found = all.filter((m) => m.trigger === 'before-tick' && m.tick === which.beforeTick).at(-1);
    if (!found) throw new CodedError('SNAPSHOT_NOT_FOUND', `No snapshot was taken before tick ${which.beforeTick} of ${instance.name} (kernel-runner snapshots ${instance.name} lists them).`);
    return found;
  }
  const newest = all.at(-1);
  if (!newest) throw new CodedError('SNAPSHOT_NOT_FOUND', `${instance.name} has no snapshot yet: kernel-runner snapshot ${instance.name} takes one.`);
  return newest;
}

export interface RollbackReport extends RestoreReport {
  /** The snapshot of the state just before the rollback (undo it with kernel-runner rollback NAME <this>). */
  saved: string;
}

/** Roll `instance` back to `id`: the state now is saved first (a rollback can be undone), then the snapshot restored. */
export async function rollback(instance: Instance, id: string, options: { logger: Logger; onProgress?: (line: string) => void; onFailed?: (error: unknown) => Promise<void> }): Promise<RollbackReport> {
  const hold = await holdInstance(instance, { restore: true, logger: options.logger });
  try {
    options.onProgress?.('saving the state now (a snapshot to undo this rollback)');
    const saved = await takeSnapshot(instance, { trigger: 'before-rollback', note: `before rolling back to ${id}`, logger: options.logger });
    const report = await restoreSnapshot(instance, id, options);
    // It has its container again: no longer suspended.
    await removeSuspended(instance.paths);
    return { ...report, saved: saved.id };
  } finally {
    await hold.release();
  }
}

export async function removeSnapshot(instance: Instance, id: string): Promise<{ freedBytes: number }> {
  const hold = await holdInstance(instance, { restore: false });
  try {
    return await removeSnapshots(instance, [id]);
  } finally {
    await hold.release();
  }
}

/**
 * Suspend: a snapshot of the instance now (trigger `suspend`), then its container (and egress
 * proxy) removed; the record that it is suspended goes first, so that nothing makes a fresh
 * container meanwhile. An idle agent then costs disk only.
 */
export async function suspendInstance(instance: Instance, options: { logger: Logger; onProgress?: (line: string) => void }): Promise<Manifest> {
  if (instance.config.container.backend === 'host') throw new CodedError('USAGE', `${instance.name} runs on the host (container.backend "host"): there is no container to suspend.`);
  const already = await readSuspended(instance.paths);
  if (already) throw new CodedError('INSTANCE_SUSPENDED', `${instance.name} is suspended already (since ${already.at}, snapshot ${already.snapshot}): kernel-runner resume ${instance.name} brings it back.`);
  const hold = await holdInstance(instance, { restore: true, logger: options.logger });
  try {
    options.onProgress?.('saving the instance (a snapshot)');
    const manifest = await takeSnapshot(instance, { trigger: 'suspend', note: 'suspended', logger: options.logger });
    await writeSuspended(instance.paths, { snapshot: manifest.id, at: new Date().toISOString() });
    options.onProgress?.('removing the container');
    await containerDown(await connectEngine({ socket: engineSetting(instance.config.container) }), instance, { logger: options.logger });
    return manifest;
  } finally {
    await hold.release();
  }
}

export interface ResumeReport extends RestoreReport {
  suspended: SuspendRecord;
}

/**
 * Resume a suspended instance: its container made again from the suspend snapshot, checked
 * against its digests, and the record removed; undefined when it is not suspended. A tick calls
 * it first thing under its own lock (`holdsTicks`), so a message or a wake resumes it.
 */
export async function resumeSuspended(instance: Instance, options: { logger: Logger; holdsTicks?: boolean; onProgress?: (line: string) => void }): Promise<ResumeReport | undefined> {
  if (!(await readSuspended(instance.paths))) return undefined;
  const hold = await holdInstance(instance, { restore: true, logger: options.logger, ...(options.holdsTicks ? { holdsTicks: true } : {}) });
  try {
    // Read again under the hold: another resume may have finished meanwhile.
    const suspended = await readSuspended(instance.paths);
    if (!suspended) return undefined;
    const report = await restoreContainerOnly(instance, suspended.snapshot, options);
    await removeSuspended(instance.paths);
    options.logger.info({ snapshot: suspended.snapshot }, `resumed ${instance.name} from snapshot ${suspended.snapshot}`);
    return { ...report, suspended };
  } finally {
    await hold.release();
  }
}
