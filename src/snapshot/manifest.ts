import { constants } from 'node:fs';
import { mkdir, open, readFile, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { CodedError } from '../errors.js';
import { writeFileAtomic } from '../util/atomic-write.js';

/**
 * A snapshot's manifest: every entry it holds (path, type, mode, owner, size, digest, a link's
 * target as data, never followed), in three trees: the data directory, the container's changes
 * from its image (with the paths it deleted), and the host's own record of the terminals. The
 * content is in the store (store.ts) under each file's digest; restore checks every restored
 * file against these digests (verify.ts).
 */

export const entrySchema = z.object({
  /** Relative to the tree's top, '/'-separated, never '..' or absolute. */
  path: z.string().min(1),
  type: z.enum(['file', 'dir', 'symlink', 'hardlink', 'fifo']),
  /** Permission bits (set-uid and set-gid only in the container tree). */
  mode: z.int().min(0).max(0o7777),
  uid: z.int().min(0),
  gid: z.int().min(0),
  size: z.int().min(0),
  /** mtime in whole seconds. */
  mtime: z.number(),
  digest: z.string().optional(),
  /** A symlink's target, or a hard link's path in the same tree. */
  target: z.string().optional(),
  /** A file's change stamp (device, inode, size, mtime, ctime; in the container tree, of its upper layer): an unchanged file is not read again. */
  stamp: z.string().optional(),
});

export type Entry = z.infer<typeof entrySchema>;

export const TRIGGERS = ['manual', 'before-tick', 'suspend', 'before-rollback', 'before-move', 'fork'] as const;
export type Trigger = (typeof TRIGGERS)[number];

export const manifestSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  instance: z.string(),
  createdAt: z.string(),
  trigger: z.enum(TRIGGERS),
  /** The tick it was taken before (before-tick), or the last tick before it. */
  tick: z.int().optional(),
  note: z.string().optional(),
  data: z.array(entrySchema),
  container: z.object({
    entries: z.array(entrySchema),
    /** Paths of the image the container had deleted. */
    deleted: z.array(z.string()),
    /** Subtrees it had added whole: cleared in a fresh container before they are put back. */
    replaced: z.array(z.string()),
    /** The image's hash label when taken. */
    imageHash: z.string().optional(),
  }),
  /** The host-private record of the terminals: `sessions/` (scrollback, registry) and `private/ttys.json` (what was seen). */
  host: z.array(entrySchema),
  /** The operator's instance file then (a fork starts from it). */
  operatorConfig: z.string().optional(),
  /** Entries left out, with why (a device, a socket). */
  skipped: z.array(z.object({ tree: z.string(), path: z.string(), why: z.string() })),
  /** Content bytes it holds, and those it added to the store. */
  bytes: z.int(),
  newBytes: z.int(),
  /** Files not read again: the same change stamp as in the snapshot before. */
  unread: z.int().optional(),
});

export type Manifest = z.infer<typeof manifestSchema>;
export type ManifestDraft = Omit<Manifest, 'id' | 'version'>;

/** Manifests of one instance, `<state>/snapshots/manifests/<id>.json` (0600): ids count up from 1. */
export class ManifestShelf {
  readonly dir: string;

  constructor(root: string) {
    this.dir = path.join(root, 'manifests');
  }

  async ids(): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    return names
      .filter((name) => /^[0-9]+\.json$/.test(name))
      .map((name) => name.slice(0, -5))
      .sort((a, b) => Number(a) - Number(b));
  }

  async read(id: string): Promise<Manifest> {
    if (!/^[0-9]+$/.test(id)) throw new CodedError('SNAPSHOT_NOT_FOUND', `${JSON.stringify(id)} is not a snapshot id (they are numbers: kernel-runner snapshots NAME lists them).`);
    let text: string;
    try {
      text = await readFile(path.join(this.dir, `${id}.json`), 'utf8');
    } catch {
      throw new CodedError('SNAPSHOT_NOT_FOUND', `No snapshot ${id} (kernel-runner snapshots NAME lists them).`, { details: { id } });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = manifestSchema.safeParse(json);
    if (!parsed.success) throw new CodedError('SNAPSHOT_MISMATCH', `Snapshot ${id}'s manifest is damaged (${z.prettifyError(parsed.error).split('\n')[0] ?? ''}): it cannot be restored.`);
    return parsed.data;
  }

  async all(): Promise<Manifest[]> {
    const out: Manifest[] = [];
    // One being written (an empty file for a moment) is not yet a snapshot.
    for (const id of await this.ids()) {
      const manifest = await this.read(id).catch(() => undefined);
      if (manifest) out.push(manifest);
    }
    return out;
  }

  /** Save `draft` under the next free id (O_EXCL: two takers never share one). */
  async add(draft: ManifestDraft): Promise<Manifest> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const ids = await this.ids();
    for (let next = Number(ids.at(-1) ?? 0) + 1; ; next++) {
      const id = String(next);
      const file = path.join(this.dir, `${id}.json`);
      try {
        const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
        await handle.close();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw error;
      }
      const manifest: Manifest = { version: 1, id, ...draft };
      await writeFileAtomic(file, JSON.stringify(manifest), 0o600);
      return manifest;
    }
  }

  async remove(id: string): Promise<void> {
    await this.read(id);
    await unlink(path.join(this.dir, `${id}.json`));
  }
}

/** Every digest a manifest refers to. */
export function digestsOf(manifest: Manifest): string[] {
  const digests = [...manifest.data, ...manifest.container.entries, ...manifest.host].flatMap((entry) => (entry.digest ? [entry.digest] : []));
  if (manifest.operatorConfig) digests.push(manifest.operatorConfig);
  return digests;
}
