import { stat } from 'node:fs/promises';
import path from 'node:path';
import { CodedError } from '../errors.js';
import type { AgentConfig } from './agent-config.js';
import { loadEffectiveConfig } from './operator-config.js';
import { type InstancePaths, instancePaths } from './paths.js';
import { loadRegistry, validateInstanceName } from './registry.js';
import { claimStateDir, ensureStateDirs } from './state-dir.js';

/** An agent instance: a name, its data directory (the agent's data repo) and its config. */
export interface Instance {
  readonly name: string;
  readonly dataDir: string;
  /** Data-dir paths (untrusted) and host-private state paths. */
  readonly paths: InstancePaths;
  /** What applies: the operator's file, then what the agent may tune in system/agent_config.json. */
  readonly config: AgentConfig;
  /** Fields of system/agent_config.json ignored because they have host effect (operator-config.ts); absent: none. */
  readonly ignoredConfig?: readonly string[];
}

async function isDirectory(p: string): Promise<boolean> {
  return stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** A name derived from a directory that is not registered: its base name, made valid. */
export function nameFromDirectory(dir: string): string {
  const base = path.basename(path.resolve(dir)).replace(/[^A-Za-z0-9_.-]/g, '-').replace(/\.\.+/g, '.');
  return base.replace(/^\.+/, '') || 'agent';
}

/**
 * `<name-or-dir>` → an Instance. A registered name wins; anything with a slash, or an
 * existing directory, is taken as a data directory.
 */
export async function resolveInstance(nameOrDir: string, env: NodeJS.ProcessEnv = process.env): Promise<Instance> {
  const registry = await loadRegistry(env);
  const looksLikePath = nameOrDir.includes('/') || nameOrDir === '.' || nameOrDir === '..';
  const registered = looksLikePath ? undefined : registry.instances[nameOrDir];

  let name: string;
  let dataDir: string;
  if (registered) {
    name = nameOrDir;
    dataDir = registered.dir;
    if (!(await isDirectory(dataDir))) {
      throw new CodedError(
        'INSTANCE_NOT_FOUND',
        `Instance "${name}" is registered at ${dataDir}, but that directory does not exist. Restore it, or run kernel-runner init ${name} <dir> again.`,
      );
    }
  } else if (looksLikePath || (await isDirectory(nameOrDir))) {
    dataDir = path.resolve(nameOrDir);
    if (!(await isDirectory(dataDir))) {
      throw new CodedError('INSTANCE_NOT_FOUND', `${dataDir} is not a directory. Create it with kernel-runner init <name> ${nameOrDir}.`);
    }
    const byDir = Object.entries(registry.instances).find(([, entry]) => entry.dir === dataDir);
    name = byDir ? byDir[0] : nameFromDirectory(dataDir);
    if (byDir) return loadInstance(name, dataDir, env, true);
  } else {
    validateInstanceName(nameOrDir);
    throw new CodedError(
      'INSTANCE_NOT_FOUND',
      `No instance named "${nameOrDir}". Create one with: kernel-runner init ${nameOrDir} <dir> (or pass a data directory path).`,
      { details: { name: nameOrDir } },
    );
  }
  return loadInstance(name, dataDir, env, registered !== undefined);
}

/**
 * The Instance of a known name and data directory (its state folders made ready).
 * `registered`: the registry names this directory (else the first directory to use a name keeps it).
 */
export async function loadInstance(name: string, dataDir: string, env: NodeJS.ProcessEnv = process.env, registered = false): Promise<Instance> {
  const paths = instancePaths(name, dataDir, env);
  await ensureStateDirs(paths);
  await claimStateDir(paths, name, registered);
  const { config, ignored } = await loadEffectiveConfig(name, dataDir, env);
  return { name, dataDir, paths, config, ignoredConfig: ignored };
}
