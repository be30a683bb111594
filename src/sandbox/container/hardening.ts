import { realpathSync } from 'node:fs';
import path from 'node:path';
import type Dockerode from 'dockerode';
import type { ContainerConfig } from '../../config/agent-config.js';
import { CodedError } from '../../errors.js';
import { proxyEnv } from '../egress/squid.js';
import { CONTAINER_ULIMITS } from '../engine/ulimits.js';

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
}

export interface HardeningInput {
  config: ContainerConfig;
  /** Absolute data directory, as the instance names it (the mount target inside). */
  dataDir: string;
  /** Host-private folders shown read-only inside the data directory (paths.ts showToContainer). */
  shown?: ReadonlyArray<{ source: string; target: string }>;
  host: HostFacts;
  /** The operator's configuration file, named in refusals. */
  configFile: string;
  /**
   * A remote engine: the data directory is this volume on the engine's side (mounted at
   * `dataDir`); no host path is mounted, so the host-private folders are not shown either.
   */
  dataVolume?: string | undefined;
}

export type HardenedOptions = Pick<Dockerode.ContainerCreateOptions, 'HostConfig' | 'Env' | 'WorkingDir'>;

const ENGINE_SOCKET_DIR = /^\/(var\/)?run\/(docker|podman|containerd|crio)(\/|$)/;

type Refuse = (message: string, details?: Record<string, unknown>) => never;

/** Errors name the config file, then the field. */
function refuserFor(file: string): Refuse {
  return (message, details = {}) => {
    throw new CodedError('CONFIG_REFUSED', `${file}: ${message}`, { details: { file, ...details } });
  };
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

/**
 * Pure: the hardened create options for an instance's container. Throws CONFIG_REFUSED
 * (naming the field and what to do) for privileged mode, engine sockets, host paths outside
 * the data directory, and mounts that would cover the root or the data directory.
 */
export function hardenedCreateOptions({ config, dataDir, shown = [], host, configFile, dataVolume }: HardeningInput): HardenedOptions {
  const refuse = refuserFor(configFile);
  if (config.privileged) {
    refuse('container.privileged is true; privileged containers are refused (they can take over the host). Remove the field, or add a specific capability with container.cap_add.');
  }
  if (!path.isAbsolute(dataDir)) throw new CodedError('INTERNAL', `data directory must be absolute, got ${dataDir}`);
  const mounts: Dockerode.MountSettings[] = dataVolume === undefined ? dataDirMounts(dataDir, shown, host, refuse) : [{ Type: 'volume', Source: dataVolume, Target: dataDir, ReadOnly: false }];
  if (config.mounts.length > 0) {
    refuse(
      `container.mounts: extra mounts are refused. The engine resolves a mount's source again at every start, following any link the agent ` +
        `put there in the meantime (inside the data directory it can replace anything); and nothing outside the data directory is shown to ` +
        `the agent. The data directory is mounted at ${dataDir}: link other paths to it from inside the container (the Containerfile or a pre-tick hook), ` +
        `then remove container.mounts.`,
    );
  }

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
    // allowlist: loopback only; the egress link (egress/proxy.ts) joins this namespace.
    NetworkMode: config.network === 'open' ? 'bridge' : 'none',
    ReadonlyRootfs: config.read_only_root,
    Mounts: mounts,
    Ulimits: CONTAINER_ULIMITS,
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

/** The data directory bind-mounted from the host, and the host-private folders shown read-only in it. */
function dataDirMounts(dataDir: string, shown: ReadonlyArray<{ source: string; target: string }>, host: HostFacts, refuse: Refuse): Dockerode.MountSettings[] {
  const realData = host.realpath(dataDir);
  if (realData === undefined) {
    throw new CodedError('INSTANCE_NOT_FOUND', `The data directory ${dataDir} does not exist. Create it with kernel-runner init.`);
  }
  if (realData === '/' || ENGINE_SOCKET_DIR.test(realData)) {
    refuse(`the data directory ${dataDir} resolves to ${realData}; mounting it would expose the host. Use a directory of its own.`);
  }
  const mounts: Dockerode.MountSettings[] = [{ Type: 'bind', Source: realData, Target: dataDir, ReadOnly: false }];
  // Read-only: the host writes these, the container only reads them (the membrane).
  for (const { source, target } of shown) mounts.push({ Type: 'bind', Source: source, Target: target, ReadOnly: true });
  return mounts;
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
  };
}
