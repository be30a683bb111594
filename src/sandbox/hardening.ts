import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type Dockerode from 'dockerode';
import type { ContainerConfig } from '../config/agent-config.js';
import { dataPaths } from '../config/paths.js';
import { KernelError } from '../errors.js';
import { proxyEnv } from './egress-squid.js';

/**
 * Container hardening (seed 001): the one place that turns an instance's `container`
 * config into engine create options. Pure: facts about host paths come in as `host`.
 *
 * What is always set, and why:
 * - CapDrop ALL, then only `cap_add` back. The default set (agent-config.ts DEFAULT_CAPABILITIES):
 *   CHOWN, FOWNER, DAC_OVERRIDE, FSETID: root inside manages files it did not create (apt, git, the data repo);
 *   SETUID, SETGID: apt drops to the `_apt` user, `su`/`runuser` switch users;
 *   KILL: signal processes of other users (Ctrl-C to a program that changed user).
 *   Nothing that reaches the host (SYS_ADMIN, NET_ADMIN, SYS_PTRACE, SYS_MODULE...) can be added.
 * - no-new-privileges: setuid binaries cannot gain what was dropped.
 * - PidsLimit, Memory (= MemorySwap, so no swap on top), NanoCpus: one runaway agent cannot starve the host.
 * - Init: a real PID 1 (tini / catatonit) that reaps zombies left by killed terminals.
 * - Ulimits nofile/nproc set explicitly: Podman's defaults can exceed the host's hard limits
 *   and the container then fails to start ("error setting rlimit").
 * - The data directory is the only writable host mount unless `mounts` adds paths inside it; it is
 *   mounted at the same absolute path so that paths agree inside and outside. The host-private
 *   folders the agent reads (per-TTY files, logs, the rcfile) are mounted read-only over it.
 */

/** What the hardening needs to know about host paths; `hostFacts()` reads them from the file system. */
export interface HostFacts {
  /** The path with symlinks and `..` resolved, or undefined when it does not exist. */
  realpath(p: string): string | undefined;
  isSocket(p: string): boolean;
}

export interface HardeningInput {
  config: ContainerConfig;
  /** Absolute data directory, as the instance names it (the mount target inside). */
  dataDir: string;
  /** Host-private folders shown read-only inside the data directory (paths.ts showToContainer). */
  shown?: ReadonlyArray<{ source: string; target: string }>;
  host: HostFacts;
}

export type HardenedOptions = Pick<Dockerode.ContainerCreateOptions, 'HostConfig' | 'Env' | 'WorkingDir'>;

export const ULIMIT_NOFILE = 16_384;
/** Per user on the host for rootful engines (root inside is root outside), so generous; PidsLimit is the real cap. */
export const ULIMIT_NPROC = 32_768;

/** Engine sockets by name: mounting any of them gives the agent the host. */
const ENGINE_SOCKET_NAME = /(^|\/)(docker|podman|containerd|dockershim|cri-dockerd|crio)(\.sock)?$/;
const ENGINE_SOCKET_DIR = /^\/(var\/)?run\/(docker|podman|containerd|crio)(\/|$)/;
const FORBIDDEN_TARGETS = ['/proc', '/sys', '/dev'];

type Refuse = (message: string, details?: Record<string, unknown>) => never;

/** Errors name the config file, then the field. */
function refuserFor(file: string): Refuse {
  return (message, details = {}) => {
    throw new KernelError('CONFIG_REFUSED', `${file}: ${message}`, { details: { file, ...details } });
  };
}

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** "512m" → 536870912. */
export function parseMemory(text: string, refuse: Refuse = refuserFor('agent_config.json')): number {
  const match = /^(\d+)([kmg]?)$/i.exec(text.trim());
  if (!match) refuse(`container.memory: expected a size such as "512m" or "2g", got ${JSON.stringify(text)}`);
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(match[2] ?? '').toLowerCase() as '' | 'k' | 'm' | 'g'];
  const bytes = Number(match[1]) * unit;
  if (bytes < 16 * 1024 ** 2) refuse(`container.memory: ${text} is too small to run a shell; use at least "64m"`);
  return bytes;
}

function checkMount(
  mount: ContainerConfig['mounts'][number],
  index: number,
  dataDir: string,
  realData: string,
  host: HostFacts,
  refuse: Refuse,
): Dockerode.MountSettings {
  const field = `container.mounts[${index}]`;
  const source = path.resolve(dataDir, mount.source);
  if (ENGINE_SOCKET_NAME.test(source) || ENGINE_SOCKET_DIR.test(source)) {
    refuse(`${field}.source ${JSON.stringify(mount.source)} is a container engine socket; mounting it would give the agent the host. Remove this mount.`, { source });
  }
  const real = host.realpath(source);
  if (real === undefined) refuse(`${field}.source ${JSON.stringify(mount.source)} does not exist (resolved to ${source}). Create it inside the data directory, or remove the mount.`, { source });
  if (ENGINE_SOCKET_NAME.test(real) || ENGINE_SOCKET_DIR.test(real) || host.isSocket(real)) {
    refuse(`${field}.source ${JSON.stringify(mount.source)} resolves to a socket (${real}); sockets (above all a docker or podman socket) are never mounted. Remove this mount.`, { source, real });
  }
  if (!isInside(realData, real)) {
    refuse(`${field}.source ${JSON.stringify(mount.source)} resolves to ${real}, outside the data directory ${realData}; only paths inside it may be mounted.`, { source, real });
  }
  const target = path.posix.normalize(mount.target).replace(/(.)\/+$/, '$1');
  if (target === '/' || isInside(target, dataDir)) {
    refuse(`${field}.target ${JSON.stringify(mount.target)} would cover ${target === '/' ? 'the root file system' : `the data directory ${dataDir}`}; pick a target elsewhere (for example /mnt/...).`, { target });
  }
  const forbidden = FORBIDDEN_TARGETS.find((t) => isInside(t, target));
  if (forbidden) refuse(`${field}.target ${JSON.stringify(mount.target)} is inside ${forbidden}, which the engine manages; pick another target.`, { target });
  return { Type: 'bind', Source: real, Target: target, ReadOnly: mount.read_only };
}

/**
 * Pure: the hardened create options for an instance's container. Throws CONFIG_REFUSED
 * (naming the field and what to do) for privileged mode, engine sockets, host paths outside
 * the data directory, and mounts that would cover the root or the data directory.
 */
export function hardenedCreateOptions({ config, dataDir, shown = [], host }: HardeningInput): HardenedOptions {
  const refuse = refuserFor(dataPaths(dataDir).agentConfig);
  if (config.privileged) {
    refuse('container.privileged is true; privileged containers are refused (they can take over the host). Remove the field, or add a specific capability with container.cap_add.');
  }
  if (!path.isAbsolute(dataDir)) throw new KernelError('INTERNAL', `data directory must be absolute, got ${dataDir}`);
  const realData = host.realpath(dataDir);
  if (realData === undefined) {
    throw new KernelError('INSTANCE_NOT_FOUND', `The data directory ${dataDir} does not exist. Create it with kernel-runner init.`);
  }
  if (realData === '/' || ENGINE_SOCKET_DIR.test(realData)) {
    refuse(`the data directory ${dataDir} resolves to ${realData}; mounting it would expose the host. Use a directory of its own.`);
  }

  const mounts: Dockerode.MountSettings[] = [{ Type: 'bind', Source: realData, Target: dataDir, ReadOnly: false }];
  // Read-only: the host writes these, the container only reads them (the membrane).
  for (const { source, target } of shown) mounts.push({ Type: 'bind', Source: source, Target: target, ReadOnly: true });
  const seenTargets = new Set([dataDir, ...shown.map((m) => m.target)]);
  config.mounts.forEach((mount, index) => {
    const settings = checkMount(mount, index, dataDir, realData, host, refuse);
    if (seenTargets.has(settings.Target)) refuse(`container.mounts[${index}].target ${settings.Target} is mounted twice; keep one.`);
    seenTargets.add(settings.Target);
    mounts.push(settings);
  });

  const memory = parseMemory(config.memory, refuse);
  const hostConfig: Dockerode.HostConfig = {
    CapDrop: ['ALL'],
    CapAdd: [...new Set(config.cap_add)],
    SecurityOpt: ['no-new-privileges'],
    Privileged: false,
    PidsLimit: config.pids_limit,
    Memory: memory,
    MemorySwap: memory,
    NanoCpus: Math.round(config.cpus * 1e9),
    Init: true,
    // allowlist: loopback only; the egress link (egress-proxy.ts) joins this namespace.
    NetworkMode: config.network === 'open' ? 'bridge' : 'none',
    ReadonlyRootfs: config.read_only_root,
    Mounts: mounts,
    Ulimits: [
      { Name: 'nofile', Soft: ULIMIT_NOFILE, Hard: ULIMIT_NOFILE },
      { Name: 'nproc', Soft: ULIMIT_NPROC, Hard: ULIMIT_NPROC },
    ],
    IpcMode: 'private',
    RestartPolicy: { Name: 'no' },
  };
  if (config.read_only_root) {
    hostConfig.Tmpfs = { '/tmp': 'rw,nosuid,nodev,size=256m', '/run': 'rw,nosuid,nodev,size=64m' };
  }
  return {
    HostConfig: hostConfig,
    Env: Object.entries({ ...(config.network === 'allowlist' ? proxyEnv() : {}), ...config.env }).map(([key, value]) => `${key}=${value}`),
    WorkingDir: dataDir,
  };
}

/** The real file system's answers, for `hardenedCreateOptions`. */
export function hostFacts(): HostFacts {
  return {
    realpath(p) {
      try {
        return realpathSync(p);
      } catch {
        return undefined;
      }
    },
    isSocket(p) {
      try {
        return statSync(p).isSocket();
      } catch {
        return false;
      }
    },
  };
}
