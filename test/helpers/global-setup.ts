import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { silentLogger } from '../../src/log/logger.js';
import { DEFAULT_BASE_IMAGE, bootstrapBaseImage } from '../../src/sandbox/engine/bootstrap.js';
import { connectEngine, describeEngine } from '../../src/sandbox/engine/engine.js';
import { ensureEgressImage, removeEgress } from '../../src/sandbox/egress/proxy.js';
import { imageExists } from '../../src/sandbox/engine/image.js';
import { ensureImage } from '../../src/sandbox/container/instance-image.js';
import type { EngineAvailability } from './engine.js';
import { GIT_BUILD_CONTAINERFILE, GIT_TEST_IMAGE } from './git-image.js';
import { TEST_IMAGE, createTestInstance } from './test-instance.js';

function banner(lines: string[]): void {
  const rule = '!'.repeat(78);
  process.stderr.write(`\n${rule}\n${lines.map((l) => `!! ${l}`).join('\n')}\n${rule}\n\n`);
}

/**
 * Once per run: is there a container engine, and a base image? Then build Containerfile.test
 * (and its variant with git) once so that every test's own image comes out of the build cache.
 * With CI=true anything missing fails the run; elsewhere container tests skip, loudly.
 */
async function checkEngine(): Promise<EngineAvailability> {
  const logger = silentLogger();
  const engine = await connectEngine();
  const description = describeEngine(engine);
  if (!(await imageExists(engine, DEFAULT_BASE_IMAGE))) {
    process.stderr.write(`global-setup: ${DEFAULT_BASE_IMAGE} is missing; bootstrapping it with mmdebstrap (about 40 s)\n`);
    await bootstrapBaseImage(engine, { logger });
  }
  const started = Date.now();
  // Every allowlist instance (the default) starts an egress proxy: build its image once, here.
  await ensureEgressImage(engine, { logger });
  // Kept between runs on purpose: it is the build cache that makes each test's image instant, also for
  // instances whose network is `none` (their builds have no network: apt-get would fail without the cache).
  // Tagged for instances whose network is `none` (TEST_IMAGE, GIT_TEST_IMAGE): their builds cannot run apt-get,
  // and a cache hit is not certain while another test file builds the same steps without the cache.
  // Named per run: test runs in several work trees of one machine share the engine, and a fixed name
  // made them remove each other's egress proxy mid-build.
  const run = randomBytes(3).toString('hex');
  for (const [name, containerfile, tag] of [
    [`agent-kernel-test-cache-${run}`, undefined, TEST_IMAGE],
    [`agent-kernel-test-cache-git-${run}`, GIT_BUILD_CONTAINERFILE, GIT_TEST_IMAGE],
  ] as const) {
    const cache = await createTestInstance({ name, containerfile });
    try {
      const built = await ensureImage(engine, cache.instance, { logger });
      const [repo, version] = tag.split(':') as [string, string];
      await engine.docker.getImage(built.tag).tag({ repo, tag: version });
      // Only the shared tag stays (removing one of two tags just untags; the layers stay).
      await engine.docker.getImage(built.tag).remove({ noprune: true });
    } finally {
      // Its build went through its egress proxy (allowlist, the default): that goes too.
      await removeEgress(engine, cache.instance);
      // Its data directory and its claim on the name go; only the engine's build cache stays.
      await rm(path.dirname(cache.dataDir), { recursive: true, force: true });
      await rm(cache.instance.paths.stateRoot, { recursive: true, force: true });
    }
  }
  const seconds = (Date.now() - started) / 1000;
  if (seconds > 1) process.stderr.write(`global-setup: built the test and egress images in ${seconds.toFixed(1)} s\n`);
  return { available: true, description };
}

export default async function setup(project: TestProject): Promise<void> {
  let result: EngineAvailability;
  try {
    result = await checkEngine();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (process.env.CI === 'true' || process.env.CI === '1') {
      banner(['CI=true and container tests cannot run:', ...message.split('\n'), 'Run the tests with npm test (it starts an engine), or npm run setup first.']);
      throw error;
    }
    banner([
      'CONTAINER TESTS WILL BE SKIPPED: no usable container engine.',
      ...message.split('\n'),
      'Fix: npm run setup   (installs docker.io, tmux and mmdebstrap, starts dockerd, bootstraps the base image)',
      'or run the tests with npm test, which starts an engine for the run.',
    ]);
    result = { available: false, description: message };
  }
  project.provide('engine', result);
}
