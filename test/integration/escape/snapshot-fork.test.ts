import { readFileSync } from 'node:fs';
import { lstat, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { isCodedError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log/logger.js';
import { forkInstance } from '../../../src/runner/instances/fork.js';
import { findRemovalTarget, removeInstance } from '../../../src/runner/instances/instance-removal.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { Budget, DEFAULT_LIMITS } from '../../../src/snapshot/budget.js';
import { readHostTree } from '../../../src/snapshot/host-tree-read.js';
import { hashSink } from '../../../src/snapshot/store.js';
import { snapshotRoot, storeOf, takeSnapshot } from '../../../src/snapshot/take.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

vi.setConfig({ testTimeout: 300_000 });

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RACER = readFileSync(path.join(ROOT, 'test', 'fixtures', 'escape', 'tree-racer.py'), 'utf8');
const SECRET = 'CANARY-fork-secret-5e2a';
const logger = silentLogger();

/** A tree as the snapshot walk sees it (links as their targets, never followed): what a fork must reproduce. */
async function treeOf(dir: string, budgetRoot: string) {
  const entries = await readHostTree(dir, { tree: 'data', sink: hashSink, budget: new Budget(DEFAULT_LIMITS, budgetRoot), skipped: [] });
  return entries.map((e) => `${e.path} ${e.type} ${e.mode.toString(8)} ${e.target ?? ''} ${e.digest ?? ''}`).sort();
}

/**
 * A fork restores a snapshot the agent filled: links to host folders (absolute, climbing with
 * ../), hard links, FIFOs, sockets, a folder mode 000. The fork's data directory must hold the
 * links as links, write nothing through them (the host folder they name stays as it was), and
 * a fork's data directory named through a link the agent planted is refused.
 */
describeWithEngine('escape: forking an instance whose data directory holds planted links', () => {
  let test: TestInstance;
  let sandbox: Sandbox;
  let canaryDir: string;
  const forks: string[] = [];

  beforeAll(async () => {
    canaryDir = await mkdtemp(path.join(os.tmpdir(), 'ak-canary-fork-'));
    await writeFile(path.join(canaryDir, 'secret'), `${SECRET}\n`);
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger });
  });
  afterAll(async () => {
    for (const name of forks) {
      const target = await findRemovalTarget(name).catch(() => undefined);
      if (target) await removeInstance(target, { data: true, watchSocket: path.join(os.tmpdir(), `none-${name}.sock`) }).catch(() => undefined);
    }
    await test?.cleanup();
    await rm(canaryDir, { recursive: true, force: true });
  });

  it('the fork holds the planted links as links, and nothing is written or read through them', async () => {
    const seed = String(Math.floor(Math.random() * 1e6));
    const where = path.join(test.dataDir, 'hostile');
    const planted = await sandbox.run(['python3', '-c', RACER, 'plant', where, canaryDir, seed], { user: '0' });
    expect(planted.exitCode, `seed ${seed}: ${planted.stderr}`).toBe(0);
    await takeSnapshot(test.instance, { trigger: 'manual' });
    const name = `${test.name}-f`;
    forks.push(name);
    const report = await forkInstance(test.instance, name, { logger });
    expect(report.dataEntries).toBeGreaterThan(10);
    const forkDir = report.fork.dataDir;
    expect(await treeOf(path.join(forkDir, 'hostile'), snapshotRoot(report.fork)), `seed ${seed}`).toEqual(await treeOf(where, snapshotRoot(test.instance)));
    // At least one link to the host folder came through, as a link.
    const links = (await treeOf(path.join(forkDir, 'hostile'), snapshotRoot(report.fork))).filter((line) => line.includes(canaryDir));
    expect(links.length, `seed ${seed}`).toBeGreaterThan(0);
    expect(await readdir(canaryDir)).toEqual(['secret']);
    expect(await readFile(path.join(canaryDir, 'secret'), 'utf8')).toBe(`${SECRET}\n`);
    const { store } = storeOf(report.fork);
    for (const prefix of await readdir(store.objects)) {
      for (const object of await readdir(path.join(store.objects, prefix))) expect((await readFile(path.join(store.objects, prefix, object))).includes(SECRET)).toBe(false);
    }
  });

  it('a fork data directory named through a link the agent planted in the parent is refused, and nothing is made', async () => {
    await takeSnapshot(test.instance, { trigger: 'manual' });
    const outside = await mkdtemp(path.join(os.tmpdir(), 'ak-fork-out-'));
    await symlink(outside, path.join(test.dataDir, 'out'));
    const name = `${test.name}-g`;
    forks.push(name);
    for (const dataDir of [path.join(test.dataDir, 'out', 'fork'), path.join(test.dataDir, 'fork')]) {
      const error = await forkInstance(test.instance, name, { logger, dataDir }).catch((e: unknown) => e);
      expect(isCodedError(error, 'USAGE'), String(error)).toBe(true);
      expect((error as Error).message).toContain(`inside ${test.name}'s data directory, which its container can write`);
    }
    expect(await readdir(outside)).toEqual([]);
    expect(await lstat(path.join(test.dataDir, 'fork')).catch(() => undefined)).toBeUndefined();
    await rm(outside, { recursive: true, force: true });
  });
});
