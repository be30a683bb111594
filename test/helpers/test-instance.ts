import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Instance, loadInstance } from '../../src/config/instance.js';
import { dataPaths, instancePaths } from '../../src/config/paths.js';
import { connectEngine } from '../../src/sandbox/engine/engine.js';
import { removeInstanceResources } from '../../src/sandbox/container/remove-instance.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TEST_CONTAINERFILE = path.join(ROOT, 'Containerfile.test');
/** Containerfile.test, built once per run by global-setup.ts (with the network) and tagged. */
export const TEST_IMAGE = 'agent-kernel-test/base:current';

/** The operator's file lets the agent's Containerfile start from the test images (container.base_images), unless it says otherwise. */
export function withTestBases(config: Record<string, unknown>): Record<string, unknown> {
  const container = (config.container ?? {}) as Record<string, unknown>;
  if (container.base_images !== undefined) return config;
  return { ...config, container: { ...container, base_images: [TEST_IMAGE, 'agent-kernel-test/git:current'] } };
}

export interface TestInstanceOptions {
  /** Default `t-<random>`. */
  name?: string;
  /** The operator's configuration (paths.operatorConfig; default `{}`: every default). */
  config?: Record<string, unknown>;
  /** Written as the agent's system/agent_config.json (default `{}`). */
  agentConfig?: Record<string, unknown>;
  /** Where the operator's configuration goes (AGENT_KERNEL_CONFIG_DIR; default the run's, vitest.config.ts). */
  configDir?: string;
  /**
   * Containerfile text for system/container/Containerfile; default Containerfile.test (for an instance whose network is
   * `none`, `FROM` TEST_IMAGE: its builds have no network for apt-get); false: none (the built-in default is used).
   */
  containerfile?: string | false;
  /** More files to put in the data directory, by relative path. */
  files?: Record<string, string>;
}

export interface TestInstance {
  instance: Instance;
  name: string;
  dataDir: string;
  /** Reload the instance after changing files (for example agent_config.json). */
  reload(): Promise<Instance>;
  /** Remove the container, every image of this instance (by its label), and the data directory. */
  cleanup(): Promise<void>;
}

/** An instance with its host-private state under AGENT_KERNEL_STATE_DIR (vitest.config.ts: one temp folder per run). */
export async function instanceFor(name: string, dataDir: string, configDir?: string): Promise<Instance> {
  return loadInstance(name, dataDir, configDir === undefined ? process.env : { ...process.env, AGENT_KERNEL_CONFIG_DIR: configDir });
}

/** Remove what the engine holds for a test instance (only things labelled with its name), when an engine answers. */
export async function removeEngineResources(name: string): Promise<void> {
  let engine;
  try {
    engine = await connectEngine();
  } catch {
    return;
  }
  await removeInstanceResources(engine, name);
}

/**
 * A throw-away instance: a temp data directory with system/agent_config.json, the operator's
 * configuration, and (unless told
 * otherwise) Containerfile.test as system/container/Containerfile. Nothing is started:
 * call openSandbox(testInstance.instance, ...) for a container.
 */
export async function createTestInstance(options: TestInstanceOptions = {}): Promise<TestInstance> {
  const name = options.name ?? `t-${randomBytes(4).toString('hex')}`;
  // The data directory's base name is the instance name, so resolveInstance(dataDir) agrees with it.
  const parent = await mkdtemp(path.join(os.tmpdir(), 'ak-test-'));
  const dataDir = path.join(parent, name);
  const paths = dataPaths(dataDir);
  await mkdir(paths.system, { recursive: true });
  await writeFile(paths.agentConfig, JSON.stringify(options.agentConfig ?? {}, null, 2) + '\n');
  const env = options.configDir === undefined ? process.env : { ...process.env, AGENT_KERNEL_CONFIG_DIR: options.configDir };
  const operatorFile = instancePaths(name, dataDir, env).operatorConfig;
  await mkdir(path.dirname(operatorFile), { recursive: true });
  await writeFile(operatorFile, JSON.stringify(withTestBases(options.config ?? {}), null, 2) + '\n');
  if (options.containerfile !== false) {
    await mkdir(paths.containerContext, { recursive: true });
    const offline = (options.config?.container as { network?: string } | undefined)?.network === 'none';
    if (options.containerfile === undefined && offline) await writeFile(paths.containerfile, `FROM ${TEST_IMAGE}\n`);
    else if (options.containerfile === undefined) await copyFile(TEST_CONTAINERFILE, paths.containerfile);
    else await writeFile(paths.containerfile, options.containerfile);
  }
  for (const [rel, content] of Object.entries(options.files ?? {})) {
    const file = path.join(dataDir, rel);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
  return {
    instance: await instanceFor(name, dataDir, options.configDir),
    name,
    dataDir,
    reload: () => instanceFor(name, dataDir, options.configDir),
    async cleanup() {
      await removeEngineResources(name);
      await rm(parent, { recursive: true, force: true });
      await rm(instancePaths(name, dataDir).stateRoot, { recursive: true, force: true });
      await rm(operatorFile, { force: true });
    },
  };
}

/** A temp data dir for a unit test, with its system/ folder. */
export async function makeUnitDataDir(prefix: string): Promise<string> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), prefix));
  await mkdir(path.join(dataDir, 'system'), { recursive: true });
  return dataDir;
}

/** Remove a unit test's data dir and the state folder unitPaths puts beside it. */
export async function removeUnitDataDir(dataDir: string): Promise<void> {
  await rm(dataDir, { recursive: true, force: true });
  await rm(`${dataDir}.state`, { recursive: true, force: true });
}

/** Paths for a unit test's instance: its state folder beside the temp data dir, so fixed names never collide. */
export function unitPaths(name: string, dataDir: string) {
  return instancePaths(name, dataDir, { AGENT_KERNEL_STATE_DIR: `${dataDir}.state` });
}
