import { readFileSync } from 'node:fs';
import path from 'node:path';
import { configHome, instanceStateRoot, isInstanceName } from '../config/homes.js';
import { kernelSocketPath } from './socket-path.js';

/**
 * Where the kernel of `target` (an instance name, or a registered data directory) listens,
 * from the environment and the registry alone: what `serve` tries before it loads anything
 * else. Only a hint: the kernel's answer says which data directory it serves, and the caller
 * checks it. undefined: cannot be told this cheaply (an unregistered directory, a registry
 * that does not parse); the caller then resolves the instance the full way.
 */
export function locateKernel(target: string, env: NodeJS.ProcessEnv = process.env): { name: string; socketPath: string; dataDir?: string } | undefined {
  const looksLikePath = target.includes('/') || target === '.' || target === '..';
  let name: string | undefined;
  let dataDir: string | undefined;
  if (looksLikePath) {
    dataDir = path.resolve(target);
    name = registeredName(dataDir, env);
  } else if (isInstanceName(target)) {
    name = target;
  }
  if (name === undefined) return undefined;
  return { name, socketPath: kernelSocketPath(instanceStateRoot(name, env), env), ...(dataDir === undefined ? {} : { dataDir }) };
}

function registeredName(dataDir: string, env: NodeJS.ProcessEnv): string | undefined {
  try {
    const registry = JSON.parse(readFileSync(path.join(configHome(env), 'instances.json'), 'utf8')) as { instances?: Record<string, { dir?: unknown }> };
    const found = Object.entries(registry.instances ?? {}).find(([, entry]) => entry.dir === dataDir);
    return found && isInstanceName(found[0]) ? found[0] : undefined;
  } catch {
    return undefined;
  }
}
