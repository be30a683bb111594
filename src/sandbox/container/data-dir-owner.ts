import { lchown, lstat, open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { DIR_FLAGS, PinnedDir, openUntrustedDir } from '../../util/untrusted-dir.js';
import type { HostIdRange } from './user-namespace.js';

/**
 * Under a remapping engine container root is an unprivileged host uid (user-namespace.ts), so
 * the data directory must be its: the terminals write there, and runc makes the read-only
 * views' mount points in it. An existing data directory (made by `kernel-runner init` as root,
 * or used under a rootful engine, where container uid u was host uid u) is shifted once into the
 * range: host uid u < size becomes base + u (gids alike); what is in the range already stays.
 * The walk goes through untrusted-dir.ts (every folder opened O_NOFOLLOW through its parent's
 * descriptor, every entry changed with lchown relative to it), so a link or a folder swapped
 * for one mid-walk changes nothing outside the data directory. Shifting also clears set-uid bits.
 * Done when the data directory itself belongs to the range: it is changed last.
 */

function shifted(id: number, base: number, size: number): number | undefined {
  if (id >= base && id < base + size) return undefined;
  return id < size ? base + id : undefined;
}

/** The ids `owner` shifts to, or undefined when it is in the range already (or beyond the range's reach). */
function shiftedOwner(owner: { uid: number; gid: number }, ids: HostIdRange): { uid: number; gid: number } | undefined {
  const uid = shifted(owner.uid, ids.uid, ids.size);
  const gid = shifted(owner.gid, ids.gid, ids.size);
  return uid === undefined && gid === undefined ? undefined : { uid: uid ?? owner.uid, gid: gid ?? owner.gid };
}

/** An entry of a pinned folder, changed without following it. */
async function shiftEntry(file: string, ids: HostIdRange): Promise<boolean> {
  const info = await lstat(file).catch(() => undefined);
  const to = info && shiftedOwner(info, ids);
  if (!to) return false;
  await lchown(file, to.uid, to.gid).catch(() => undefined);
  return true;
}

/** A pinned folder itself, through its descriptor. */
async function shiftDir(dir: PinnedDir, ids: HostIdRange): Promise<boolean> {
  const to = shiftedOwner(await dir.stat(), ids);
  if (!to) return false;
  await dir.chown(to.uid, to.gid);
  return true;
}

async function shiftTree(dir: PinnedDir, ids: HostIdRange): Promise<number> {
  let count = 0;
  const entries = await readdir(dir.self, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.isDirectory()) {
      // O_NOFOLLOW: a folder swapped for a link since the listing is not entered.
      const handle = await open(dir.at(entry.name), DIR_FLAGS).catch(() => undefined);
      if (!handle) continue;
      const child = new PinnedDir(handle, path.join(dir.file, entry.name));
      try {
        count += await shiftTree(child, ids);
        if (await shiftDir(child, ids)) count += 1;
      } finally {
        await child.close();
      }
    } else if (await shiftEntry(dir.at(entry.name), ids)) count += 1;
  }
  return count;
}

/** Give `dataDir` and everything in it to the remapped ids; returns how many entries changed (0 when it was theirs already). */
export async function giveDataDirTo(dataDir: string, ids: HostIdRange): Promise<number> {
  if (process.getuid?.() !== 0) return 0; // only root can give files away; a rootless set-up has no remapping to follow
  const root = await openUntrustedDir(dataDir, '');
  if (!root) return 0;
  try {
    if (!shiftedOwner(await root.stat(), ids)) return 0;
    const count = await shiftTree(root, ids);
    return count + ((await shiftDir(root, ids)) ? 1 : 0);
  } finally {
    await root.close();
  }
}
