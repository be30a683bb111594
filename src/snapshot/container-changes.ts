import type Dockerode from 'dockerode';

/**
 * Pure: which paths of a container to archive, from the engine's `docker diff` (what changed
 * from the image) and its mounts. A path added whole (with everything under it) is archived as
 * one subtree; a folder only modified because its children changed is not (its children are
 * listed themselves); mounts (the data directory, the host's read-only views, tmpfs) and the
 * engine's own files are left out, and a folder holding a mount is never archived whole.
 */

export interface ChangeRoot {
  /** Absolute path in the container. */
  path: string;
  /** Added since the image (whatever was at that path in a fresh container is replaced), or modified. */
  added: boolean;
}

export interface ChangePlan {
  roots: ChangeRoot[];
  /** Paths of the image the container deleted (a deleted folder stands for everything under it). */
  deleted: string[];
}

/** The engine writes these itself into every container. */
const ENGINE_PATHS = ['/proc', '/sys', '/dev', '/etc/hosts', '/etc/hostname', '/etc/resolv.conf', '/.dockerenv', '/run/.containerenv', '/usr/sbin/docker-init'];

const KIND_MODIFIED = 0;
const KIND_ADDED = 1;
const KIND_DELETED = 2;

export function isUnder(file: string, dir: string): boolean {
  return file === dir || file.startsWith(dir === '/' ? '/' : `${dir}/`);
}

/** Mount points of the container: everything that is not its own filesystem. */
export function mountPaths(info: Dockerode.ContainerInspectInfo): string[] {
  const mounts = (info.Mounts ?? []).map((mount) => mount.Destination);
  const tmpfs = Object.keys(info.HostConfig.Tmpfs ?? {});
  return [...ENGINE_PATHS, ...mounts, ...tmpfs].filter((p) => p.startsWith('/') && p !== '/');
}

/** Component-wise order: a folder's children come right after it (`/a`, `/a/b`, `/a-b`). */
function byComponents(a: string, b: string): number {
  const x = a.replaceAll('/', '\0');
  const y = b.replaceAll('/', '\0');
  return x < y ? -1 : x > y ? 1 : 0;
}

export function planChanges(changes: ReadonlyArray<{ Path: string; Kind: number }>, excluded: readonly string[]): ChangePlan {
  const sorted = [...changes].filter((c) => c.Path.startsWith('/')).sort((a, b) => byComponents(a.Path, b.Path));
  const roots: ChangeRoot[] = [];
  const deleted: string[] = [];
  sorted.forEach(({ Path: file, Kind: kind }, index) => {
    if (excluded.some((m) => isUnder(file, m))) return;
    if (kind === KIND_DELETED) {
      const last = deleted.at(-1);
      if (last === undefined || !isUnder(file, last)) deleted.push(file);
      return;
    }
    const root = roots.at(-1);
    if (root && isUnder(file, root.path)) return;
    // A folder holding a mount point: its own changes are the mount's; its other children are listed.
    if (excluded.some((m) => isUnder(m, file))) return;
    const next = sorted[index + 1]?.Path;
    const hasChildren = next !== undefined && next !== file && isUnder(next, file);
    if (kind === KIND_ADDED) roots.push({ path: file, added: true });
    else if (kind === KIND_MODIFIED && !hasChildren) roots.push({ path: file, added: false });
  });
  return { roots, deleted };
}
