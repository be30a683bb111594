import { buffer } from 'node:stream/consumers';
import tar from 'tar-stream';
import type { Readable } from 'node:stream';
import type { Engine } from '../sandbox/engine/engine.js';
import type { Entry, Manifest } from './manifest.js';
import type { ObjectStore } from './store.js';

/**
 * What changed between two snapshots (the audit of a tick): files of the data directory and
 * of the container added, removed or changed, and the packages dpkg lists installed.
 */

export interface TreeDiff {
  added: string[];
  removed: string[];
  changed: string[];
}

export interface SnapshotDiff {
  data: TreeDiff;
  container: TreeDiff;
  packages: TreeDiff;
}

function signature(entry: Entry): string {
  return `${entry.type}:${entry.mode}:${entry.digest ?? ''}:${entry.target ?? ''}`;
}

export function diffEntries(before: readonly Entry[], after: readonly Entry[]): TreeDiff {
  const was = new Map(before.map((e) => [e.path, signature(e)]));
  const now = new Map(after.map((e) => [e.path, signature(e)]));
  return {
    added: [...now.keys()].filter((p) => !was.has(p)),
    removed: [...was.keys()].filter((p) => !now.has(p)),
    changed: [...now.keys()].filter((p) => was.has(p) && was.get(p) !== now.get(p)),
  };
}

/** The container tree as a list where a path the image had and the container deleted counts as a removed entry. */
function containerView(manifest: Pick<Manifest, 'container'>): { entries: Entry[]; deleted: Set<string> } {
  return { entries: manifest.container.entries.filter((e) => e.type !== 'dir'), deleted: new Set(manifest.container.deleted) };
}

function diffContainer(a: Pick<Manifest, 'container'>, b: Pick<Manifest, 'container'>): TreeDiff {
  const before = containerView(a);
  const after = containerView(b);
  const diff = diffEntries(before.entries, after.entries);
  // A path of the image deleted since A: removed; restored from the image since A: back (changed).
  for (const gone of after.deleted) if (!before.deleted.has(gone)) diff.removed.push(`${gone} (from the image)`);
  for (const back of before.deleted) if (!after.deleted.has(back)) diff.changed.push(`${back} (back as in the image)`);
  return diff;
}

/** Pure: dpkg's status file → package → version, for the installed ones. */
export function installedPackages(status: string): Map<string, string> {
  const packages = new Map<string, string>();
  for (const block of status.split(/\n\s*\n/)) {
    const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(block)?.[1]?.trim();
    const name = field('Package');
    if (name && field('Status')?.endsWith(' installed')) packages.set(name, field('Version') ?? '');
  }
  return packages;
}

/** dpkg's database of installed packages (spelled in parts: the architecture test guards the name `status` for the terminals' status files). */
const DPKG_STATUS = ['var', 'lib', 'dpkg', 'status'].join('/');

/** dpkg's status in a snapshot: its own when the container changed it, else undefined (the image's). */
async function statusOf(manifest: Pick<Manifest, 'container'>, store: ObjectStore): Promise<string | undefined> {
  const entry = manifest.container.entries.find((e) => e.path === DPKG_STATUS);
  return entry?.digest ? (await store.readBuffer(entry.digest)).toString('utf8') : undefined;
}

function diffPackages(before: Map<string, string>, after: Map<string, string>): TreeDiff {
  return {
    added: [...after].filter(([name]) => !before.has(name)).map(([name, version]) => `${name} ${version}`),
    removed: [...before].filter(([name]) => !after.has(name)).map(([name, version]) => `${name} ${version}`),
    changed: [...after].filter(([name, version]) => before.has(name) && before.get(name) !== version).map(([name, version]) => `${name} ${before.get(name) ?? ''} → ${version}`),
  };
}

/**
 * `a` → `b`. `imageStatus` reads dpkg's status of the image (for a side that left it as the image had it).
 */
export async function diffSnapshots(a: Pick<Manifest, 'data' | 'container'>, b: Pick<Manifest, 'data' | 'container'>, store: ObjectStore, imageStatus: () => Promise<string>): Promise<SnapshotDiff> {
  let image: Promise<string> | undefined;
  const fromImage = () => (image ??= imageStatus());
  const before = (await statusOf(a, store)) ?? (await fromImage());
  const after = (await statusOf(b, store)) ?? (await fromImage());
  return {
    data: diffEntries(
      a.data.filter((e) => e.type !== 'dir'),
      b.data.filter((e) => e.type !== 'dir'),
    ),
    container: diffContainer(a, b),
    packages: diffPackages(installedPackages(before), installedPackages(after)),
  };
}

const MAX_STATUS_BYTES = 64 * 1024 * 1024;

/** dpkg's status file as an image has it: read from a container created (never started) from it, then removed. */
export async function imageDpkgStatus(engine: Engine, image: string): Promise<string> {
  const container = await engine.docker.createContainer({ Image: image, Cmd: ['true'], NetworkDisabled: true, Labels: {} });
  try {
    const stream = (await container.getArchive({ path: `/${DPKG_STATUS}` })) as unknown as Readable;
    const extract = tar.extract();
    let text = '';
    extract.on('entry', (header, body, next) => {
      if (header.type === 'file' && (header.size ?? 0) <= MAX_STATUS_BYTES) {
        void buffer(body).then((data) => {
          text = data.toString('utf8');
          next();
        });
      } else {
        body.resume();
        next();
      }
    });
    await new Promise<void>((resolve, reject) => {
      extract.on('finish', resolve);
      extract.on('error', reject);
      stream.on('error', reject);
      stream.pipe(extract);
    });
    return text;
  } catch {
    return '';
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}
