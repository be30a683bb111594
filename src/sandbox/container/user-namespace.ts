import type { ContainerConfig } from '../../config/agent-config.js';
import { CodedError } from '../../errors.js';
import type { Engine } from '../engine/engine.js';

/**
 * The second boundary: whether root in the container is root on the host. The hardening
 * (hardening.ts) keeps container root in; this is the layer under it, for the day a kernel bug
 * or a mistake in the hardening lets it out.
 * - `userns-remap` (dockerd --userns-remap, what scripts/ensure-engine.sh starts): container
 *   root is an unprivileged subordinate uid on the host (100000 by default);
 * - `rootless` (rootless Podman or Docker): container root is the engine's unprivileged user;
 * - `gvisor` (runsc): the container talks to gVisor's kernel, not the host's;
 * - `none`: container root is host root, kept in by the hardening alone.
 */
export type RootMapping = 'host-root' | 'remapped' | 'rootless';

/** Pure: the engine's `SecurityOptions` (`name=userns`, `name=rootless`, ...) → the mapping. */
export function rootMappingOf(securityOptions: readonly string[]): RootMapping {
  const names = securityOptions.map((option) => /(?:^|,)name=([^,]+)/.exec(option)?.[1]);
  if (names.includes('rootless')) return 'rootless';
  if (names.includes('userns')) return 'remapped';
  return 'host-root';
}

/** Host ids that container root and its users map to: container uid u is host uid `uid + u`, for u < size. */
export interface HostIdRange {
  uid: number;
  gid: number;
  size: number;
}

export type BoundaryKind = 'userns-remap' | 'rootless' | 'gvisor' | 'none';

/** What an engine gives its containers by default, and what it could give. */
export interface EngineBoundary {
  kind: BoundaryKind;
  /** userns-remap: where container ids land on the host (from the engine's root dir, `<data-root>/<uid>.<gid>`). */
  hostIds?: HostIdRange | undefined;
  /** The OCI runtimes the engine has (`runsc` makes container.boundary "gvisor" possible). */
  runtimes: string[];
}

/** Subordinate ranges dockerd's `default` remapping takes (`dockremap:100000:65536`). */
const DEFAULT_RANGE = 65_536;

interface EngineInfo {
  SecurityOptions?: string[] | null;
  DockerRootDir?: string;
  DefaultRuntime?: string;
  Runtimes?: Record<string, unknown> | null;
}

/** Pure: `docker info` → the engine's boundary. */
export function boundaryOfInfo(info: EngineInfo): EngineBoundary {
  const runtimes = Object.keys(info.Runtimes ?? {});
  const mapping = rootMappingOf(info.SecurityOptions ?? []);
  if (mapping === 'rootless') return { kind: 'rootless', runtimes };
  if (mapping === 'remapped') {
    const ids = /\/(\d+)\.(\d+)\/?$/.exec(info.DockerRootDir ?? '');
    return { kind: 'userns-remap', hostIds: ids ? { uid: Number(ids[1]), gid: Number(ids[2]), size: DEFAULT_RANGE } : undefined, runtimes };
  }
  if (info.DefaultRuntime === 'runsc') return { kind: 'gvisor', runtimes };
  return { kind: 'none', runtimes };
}

/** Podman's own info: `host.security.rootless`. */
function podmanIsRootless(engine: Engine): Promise<boolean> {
  return new Promise((resolve, reject) => {
    engine.docker.modem.dial({ path: '/v4.0.0/libpod/info', method: 'GET', statusCodes: { 200: true, 500: 'server error' } }, (error: unknown, info: unknown) => {
      if (error) reject(error instanceof Error ? error : new Error(String(error)));
      else resolve((info as { host?: { security?: { rootless?: unknown } } } | undefined)?.host?.security?.rootless === true);
    });
  });
}

const cache = new WeakMap<Engine, Promise<EngineBoundary>>();

/** The engine's boundary (asked once per connection). */
export function engineBoundary(engine: Engine): Promise<EngineBoundary> {
  let known = cache.get(engine);
  if (!known) {
    known = engine.docker.info().then(async (info: EngineInfo) => {
      const boundary = boundaryOfInfo(info);
      // Podman 4.3 does not say `name=rootless` in Docker's info; its own info does.
      if (engine.name === 'podman' && boundary.kind === 'none' && (await podmanIsRootless(engine))) return { kind: 'rootless' as const, runtimes: boundary.runtimes };
      return boundary;
    });
    known.catch(() => cache.delete(engine));
    cache.set(engine, known);
  }
  return known;
}

/** Pure: the boundary an instance's container gets on this engine (`container.boundary` picks). */
export function instanceBoundary(config: Pick<ContainerConfig, 'boundary'>, engine: EngineBoundary): BoundaryKind {
  if (config.boundary === 'gvisor') return 'gvisor';
  if (config.boundary === 'none') return 'none';
  return engine.kind;
}

/**
 * Pure: the create options `container.boundary` adds. `gvisor` needs the engine's `runsc` runtime
 * (refused, with the fix, when it has none); `none` turns the engine's remapping off for this one
 * container (Docker's `--userns=host`).
 */
export function boundaryCreateOptions(config: Pick<ContainerConfig, 'boundary'>, engine: EngineBoundary, configFile: string): { Runtime?: string; UsernsMode?: string } {
  if (config.boundary === 'gvisor') {
    if (!engine.runtimes.includes('runsc')) {
      throw new CodedError(
        'CONFIG_REFUSED',
        `${configFile}: container.boundary is "gvisor" but the engine has no runsc runtime (it has ${engine.runtimes.join(', ') || 'none listed'}). ` +
          `Install it (apt-get install runsc) and start dockerd with --add-runtime runsc=/usr/bin/runsc, or remove container.boundary.`,
      );
    }
    return { Runtime: 'runsc' };
  }
  if (config.boundary === 'none' && engine.kind === 'userns-remap') return { UsernsMode: 'host' };
  return {};
}

/** For people: what the boundary means for this instance. */
export function describeBoundary(kind: BoundaryKind, hostIds?: HostIdRange): string {
  switch (kind) {
    case 'userns-remap':
      return `userns-remap: root in the container is host uid ${hostIds?.uid ?? '(a subordinate uid)'}, an unprivileged user that the data directory is given to (at container up)`;
    case 'rootless':
      return "rootless engine: root in the container is the engine's unprivileged user on the host";
    case 'gvisor':
      return "gVisor (runsc): the container's system calls go to gVisor's kernel, not the host's";
    case 'none':
      return 'none: root in the container is root on the host, kept in by the hardening alone';
  }
}
