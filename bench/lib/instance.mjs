/**
 * Throw-away instances for the benchmarks, made the way test/helpers/test-instance.ts makes
 * them (a temp data dir whose system/container/Containerfile is Containerfile.test), in
 * plain JS on the built dist/. Cleanup removes only what carries this instance's label.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './paths.mjs';

const dist = (rel) => import(path.join(ROOT, 'dist', rel));
const [{ instancePaths }, { loadInstance }, { containerName }, { removeInstanceResources }, { connectEngine }, { ensureImage }, { silentLogger }] = await Promise.all([
  dist('config/paths.js'),
  dist('config/instance.js'),
  dist('sandbox/container/container.js'),
  dist('sandbox/container/remove-instance.js'),
  dist('sandbox/engine/engine.js'),
  dist('sandbox/container/instance-image.js'),
  dist('log/logger.js'),
]);

export const TEST_CONTAINERFILE = path.join(ROOT, 'Containerfile.test');
let enginePromise;
export function engine() {
  enginePromise ??= connectEngine();
  return enginePromise;
}

/** The container of an instance (dockerode), for raw `docker exec` baselines. */
export async function containerOf(name) {
  return (await engine()).docker.getContainer(containerName(name));
}

export async function createInstance({ name = `bench-${randomBytes(3).toString('hex')}`, config = {} } = {}) {
  const parent = await mkdtemp(path.join(os.tmpdir(), 'ak-bench-'));
  const dataDir = path.join(parent, name);
  const paths = instancePaths(name, dataDir);
  await mkdir(paths.containerContext, { recursive: true });
  // The operator's configuration (host effect); the agent's own file stays empty.
  await writeFile(paths.agentConfig, '{}\n');
  await mkdir(path.dirname(paths.operatorConfig), { recursive: true });
  await writeFile(paths.operatorConfig, `${JSON.stringify(config, null, 2)}\n`);
  await copyFile(TEST_CONTAINERFILE, paths.containerfile);
  // login opens no terminal by itself: every terminal in the figures is one the bench opened.
  await writeFile(paths.startup, `${JSON.stringify({ terminals: [] })}\n`);
  const instance = await loadInstance(name, dataDir);
  return {
    name,
    dataDir,
    paths,
    instance,
    /** Build the image now (from the build cache), so start-up figures do not include a build. */
    async prebuild() {
      await ensureImage(await engine(), instance, { logger: silentLogger() });
    },
    async cleanup() {
      await removeEngineResources(name);
      await rm(parent, { recursive: true, force: true });
      await rm(paths.stateRoot, { recursive: true, force: true });
      await rm(paths.operatorConfig, { force: true });
    },
  };
}

/** Remove the containers, volumes and images labelled agent-kernel.instance=<name>, and nothing else. */
export async function removeEngineResources(name) {
  await removeInstanceResources(await engine(), name);
}
