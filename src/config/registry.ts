import path from 'node:path';
import { z } from 'zod';
import { CodedError } from '../errors.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { configHome, isInstanceName } from './homes.js';
import { parseWith, readJsonFile } from './parse.js';
import { ensurePrivateDir } from './private-dir.js';

/**
 * The per-user registry of instances: name → data directory, in
 * `$XDG_CONFIG_HOME/agent-kernel/instances.json` (default ~/.config).
 * `AGENT_KERNEL_CONFIG_DIR` overrides the folder (tests use it).
 */

/** Pure: an instance name is `[A-Za-z0-9_.-]+`, not `.`, and never contains `..`. */
export function validateInstanceName(name: string): string {
  if (!isInstanceName(name)) {
    throw new CodedError(
      'INSTANCE_NAME_INVALID',
      `Instance name ${JSON.stringify(name)} is not allowed: use 1-64 of A-Z a-z 0-9 _ . - (no "..").`,
      { details: { name } },
    );
  }
  return name;
}

export { configHome } from './homes.js';

const registrySchema = z.strictObject({
  instances: z.record(z.string(), z.strictObject({ dir: z.string(), created: z.string().optional() })).default({}),
});

export type Registry = z.output<typeof registrySchema>;

export function registryFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configHome(env), 'instances.json');
}

export async function loadRegistry(env: NodeJS.ProcessEnv = process.env): Promise<Registry> {
  const file = registryFile(env);
  return parseWith(registrySchema, (await readJsonFile(file)) ?? {}, file);
}

export async function registerInstance(name: string, dir: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  validateInstanceName(name);
  const registry = await loadRegistry(env);
  const existing = registry.instances[name];
  const resolved = path.resolve(dir);
  if (existing && existing.dir !== resolved) {
    throw new CodedError(
      'USAGE',
      `Instance "${name}" is already registered at ${existing.dir}. Pick another name, or remove it from ${registryFile(env)}.`,
    );
  }
  registry.instances[name] = { dir: resolved, created: existing?.created ?? new Date().toISOString() };
  await ensurePrivateDir(configHome(env), configHome(env));
  await writeFileAtomic(registryFile(env), JSON.stringify(registry, null, 2) + '\n', 0o600);
}

/** Forget a name (kernel-runner rm); false when it was not registered. */
export async function unregisterInstance(name: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const registry = await loadRegistry(env);
  if (!Object.hasOwn(registry.instances, name)) return false;
  delete registry.instances[name];
  await writeFileAtomic(registryFile(env), JSON.stringify(registry, null, 2) + '\n', 0o600);
  return true;
}
