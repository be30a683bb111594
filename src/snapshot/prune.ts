import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Instance } from '../config/instance.js';
import { type Manifest, digestsOf } from './manifest.js';
import { storeOf } from './take.js';

/**
 * Removing snapshots: one by id (`snapshot rm`), or the oldest automatic ones past the operator's
 * retention (`snapshots.keep`, `snapshots.max_store_mb`), never the newest snapshot. Content no
 * remaining manifest refers to is then removed from the store. The caller holds the instance.
 */

export interface Removed {
  ids: string[];
  freedBytes: number;
}

/** Bytes the store's objects take on disk. */
export async function storeBytes(instance: Pick<Instance, 'paths'>): Promise<number> {
  const { store } = storeOf(instance);
  let total = 0;
  for (const prefix of await readdir(store.objects).catch(() => [] as string[])) {
    const dir = path.join(store.objects, prefix);
    for (const name of await readdir(dir).catch(() => [] as string[])) total += (await lstat(path.join(dir, name)).catch(() => undefined))?.blocks ?? 0;
  }
  return total * 512;
}

async function collect(instance: Instance): Promise<number> {
  const { store, shelf } = storeOf(instance);
  const keep = new Set((await shelf.all()).flatMap(digestsOf));
  return store.collect(keep);
}

export async function removeSnapshots(instance: Instance, ids: readonly string[]): Promise<Removed> {
  const { shelf } = storeOf(instance);
  for (const id of ids) await shelf.remove(id);
  return { ids: [...ids], freedBytes: await collect(instance) };
}

/** Pure: which automatic snapshots go first (oldest first), never the newest of all. */
export function removable(manifests: readonly Manifest[]): Manifest[] {
  const newest = manifests.at(-1)?.id;
  return manifests.filter((m) => m.trigger !== 'manual' && m.id !== newest);
}

/** Apply the operator's retention after an automatic snapshot. */
export async function applyRetention(instance: Instance): Promise<Removed> {
  const { keep, max_store_mb: maxStoreMb } = instance.config.snapshots;
  const { shelf } = storeOf(instance);
  const manifests = await shelf.all();
  const candidates = removable(manifests);
  const automatic = manifests.filter((m) => m.trigger !== 'manual').length;
  const over = Math.max(0, automatic - keep);
  const removed = await removeSnapshots(
    instance,
    candidates.slice(0, over).map((m) => m.id),
  );
  // Past the disk cap: the oldest automatic ones go, one at a time, until under it.
  for (const next of candidates.slice(over)) {
    if ((await storeBytes(instance)) <= maxStoreMb * 1024 ** 2) break;
    const more = await removeSnapshots(instance, [next.id]);
    removed.ids.push(...more.ids);
    removed.freedBytes += more.freedBytes;
  }
  return removed;
}
