import { readFileSync } from 'node:fs';
import path from 'node:path';
import { configHome, instanceStateRoot, isInstanceName } from '../../config/homes.js';
import { kernelSocketPath } from '../socket-path.js';

/**
 * Where the kernel of `target` (a registered instance's name or data directory) listens, and
 * the data directory it must serve, from the environment and the registry alone: what `serve`
 * tries before it loads anything else. The kernel's answer says which data directory it serves,
 * and the caller checks it against this one. undefined: cannot be told this cheaply (an
 * unregistered name or directory, a registry that does not parse); the caller then resolves
 * the instance the full way.
 */
export function locateKernel(target: string, env: NodeJS.ProcessEnv = process.env): { name: string; socketPath: string; dataDir: string } | undefined {
  const instances = registeredInstances(env);
  const looksLikePath = target.includes('/') || target === '.' || target === '..';
  let found: [string, string] | undefined;
  if (looksLikePath) {
    const dataDir = path.resolve(target);
    found = instances.find(([, dir]) => dir === dataDir);
  } else if (isInstanceName(target)) {
    found = instances.find(([name]) => name === target);
  }
  if (found === undefined || !isInstanceName(found[0])) return undefined;
  const [name, dataDir] = found;
  return { name, socketPath: kernelSocketPath(instanceStateRoot(name, env), env), dataDir };
}

/** [name, data directory] of every registered instance; none when the registry is missing or does not parse. */
function registeredInstances(env: NodeJS.ProcessEnv): Array<[string, string]> {
  try {
    const registry = JSON.parse(readFileSync(path.join(configHome(env), 'instances.json'), 'utf8')) as { instances?: Record<string, { dir?: unknown }> };
    return Object.entries(registry.instances ?? {}).flatMap(([name, entry]) => (typeof entry?.dir === 'string' ? [[name, entry.dir] as [string, string]] : []));
  } catch {
    return [];
  }
}
