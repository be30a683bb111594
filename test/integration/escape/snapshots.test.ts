import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { isCodedError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log/logger.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { Budget, DEFAULT_LIMITS } from '../../../src/snapshot/budget.js';
import { readHostTree } from '../../../src/snapshot/host-tree-read.js';
import { storeBytes } from '../../../src/snapshot/prune.js';
import { restoreSnapshot } from '../../../src/snapshot/restore.js';
import { hashSink } from '../../../src/snapshot/store.js';
import { snapshotRoot, storeOf, takeSnapshot } from '../../../src/snapshot/take.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { pollUntil } from '../../helpers/poll.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

vi.setConfig({ testTimeout: 300_000 });

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RACER = readFileSync(path.join(ROOT, 'test', 'fixtures', 'escape', 'tree-racer.py'), 'utf8');
const SECRET = 'CANARY-snapshot-secret-91c4';
const CANARY_FILES = ['secret', ...Array.from({ length: 20 }, (_, i) => `keep-${String(i).padStart(2, '0')}`)];
const logger = silentLogger();

async function sh(sandbox: Sandbox, script: string, timeoutMs = 120_000) {
  return sandbox.run(['sh', '-c', script], { user: '0', timeoutMs });
}

/** Every object in the store, as text: what a snapshot holds. */
async function storeHolds(test: TestInstance, needle: string): Promise<boolean> {
  const { store } = storeOf(test.instance);
  for (const prefix of await readdir(store.objects).catch(() => [] as string[])) {
    for (const name of await readdir(path.join(store.objects, prefix))) {
      if ((await readFile(path.join(store.objects, prefix, name))).includes(needle)) return true;
    }
  }
  return false;
}

/**
 * The agent is root in its container and everything a snapshot holds came from it: links and
 * folders swapped for links to host folders while the host walks, FIFOs, hard links, a 10 GB
 * sparse file, thousands of empty files, and a manifest or store a person tampered with. A
 * snapshot must read nothing outside the instance, write nothing outside it on restore, never
 * block on a FIFO, and refuse what is too big before it fills the disk.
 */
describeWithEngine('escape: snapshots of an instance the agent controls', () => {
  let test: TestInstance;
  let sandbox: Sandbox;
  let canaryDir: string;

  beforeAll(async () => {
    canaryDir = await mkdtemp(path.join(os.tmpdir(), 'ak-canary-snap-'));
    for (const name of CANARY_FILES) await writeFile(path.join(canaryDir, name), `${SECRET} ${name}\n`);
    test = await createTestInstance({ config: { container: { network: 'none' }, snapshots: { max_files: 20_000, max_mb: 512 } } });
    sandbox = await openSandbox(test.instance, { logger });
  });
  afterAll(async () => {
    await test?.cleanup();
  });

  async function canaryUntouched(): Promise<void> {
    expect((await readdir(canaryDir)).sort()).toEqual([...CANARY_FILES].sort());
    for (const name of CANARY_FILES) expect(await readFile(path.join(canaryDir, name), 'utf8')).toBe(`${SECRET} ${name}\n`);
  }

  it('a hostile tree (links to host folders, FIFOs, sockets, hard links, mode 000) while folders are swapped for links: nothing outside is read, the walk never blocks', async () => {
    const where = path.join(test.dataDir, 'hostile');
    expect((await sandbox.run(['python3', '-c', RACER, 'plant', where, canaryDir, '11'], { user: '0' })).exitCode).toBe(0);
    const countFile = '/tmp/swaps';
    const race = sandbox.run(['python3', '-c', RACER, 'race', where, canaryDir, '20', countFile], { user: '0', timeoutMs: 120_000 });
    await pollUntil(async () => Number((await sh(sandbox, `cat ${countFile} 2>/dev/null`)).stdout.trim()) > 0, 'the swapper running');
    // The walk itself, with the container running (a snapshot also pauses it: this is the layer under that).
    for (let round = 0; round < 5; round++) {
      const entries = await readHostTree(test.dataDir, { tree: 'data', sink: hashSink, budget: new Budget(DEFAULT_LIMITS, snapshotRoot(test.instance)), skipped: [] });
      expect(entries.every((e) => !e.path.startsWith('/') && !e.path.split('/').includes('..'))).toBe(true);
    }
    const taken = await takeSnapshot(test.instance, { trigger: 'manual' });
    expect(taken.skipped.some((s) => /FIFO/.test(s.why))).toBe(true);
    await race;
    expect(await storeHolds(test, SECRET)).toBe(false);
    await canaryUntouched();
    // Restoring it makes the links as links, inside the data directory only.
    await restoreSnapshot(test.instance, taken.id, { logger });
    sandbox = await openSandbox(test.instance, { logger });
    await canaryUntouched();
    expect(await storeHolds(test, SECRET)).toBe(false);
  });

  it('a 10 GB sparse file, in the data directory or the container, is refused at once with its name, and the store does not grow', async () => {
    const before = await storeBytesNow(test);
    await sh(sandbox, `truncate -s 10G ${test.dataDir}/huge.img`);
    const started = Date.now();
    const error = await takeSnapshot(test.instance, { trigger: 'manual' }).catch((e: unknown) => e);
    expect(isCodedError(error, 'SNAPSHOT_REFUSED')).toBe(true);
    expect((error as Error).message).toMatch(/data:huge\.img \(10 GB\).*raise snapshots\.max_mb/);
    expect(Date.now() - started).toBeLessThan(60_000);
    await sh(sandbox, `rm ${test.dataDir}/huge.img && truncate -s 10G /root/huge.img`);
    const inContainer = await takeSnapshot(test.instance, { trigger: 'manual' }).catch((e: unknown) => e);
    expect((inContainer as Error).message).toMatch(/container:\/root\/huge\.img \(10 GB\)/);
    await sh(sandbox, 'rm /root/huge.img');
    expect(await storeBytesNow(test)).toBeLessThan(before + 1024 * 1024);
  });

  it('more files than the operator allows are refused, naming the cap and where the count ran over', async () => {
    const count = 25_000;
    expect((await sh(sandbox, `mkdir -p ${test.dataDir}/many && cd ${test.dataDir}/many && seq 1 ${count} | xargs touch`)).exitCode).toBe(0);
    const error = await takeSnapshot(test.instance, { trigger: 'manual' }).catch((e: unknown) => e);
    expect(isCodedError(error, 'SNAPSHOT_REFUSED')).toBe(true);
    expect((error as Error).message).toMatch(/more than 20000 files \(the count reached data:many\/.*raise snapshots\.max_files/);
    await sh(sandbox, `rm -rf ${test.dataDir}/many`);
  });

  it('a manifest tampered to write outside the tree is refused before anything changes; the store is out of the container\'s sight', async () => {
    const taken = await takeSnapshot(test.instance, { trigger: 'manual' });
    const { shelf } = storeOf(test.instance);
    const file = path.join(shelf.dir, `${taken.id}.json`);
    const manifest = JSON.parse(await readFile(file, 'utf8')) as { data: Array<Record<string, unknown>> };
    const someFile = manifest.data.find((e) => e.type === 'file');
    manifest.data.push({ ...someFile, path: `../../../${path.relative('/', canaryDir)}/planted` });
    await writeFile(file, JSON.stringify(manifest));
    await writeFile(path.join(test.dataDir, 'still-here'), 'yes\n');
    const error = await restoreSnapshot(test.instance, taken.id, { logger }).catch((e: unknown) => e);
    expect(isCodedError(error, 'SNAPSHOT_MISMATCH')).toBe(true);
    expect((error as Error).message).toMatch(/outside the tree it belongs to\. Nothing was changed/);
    expect(await readFile(path.join(test.dataDir, 'still-here'), 'utf8')).toBe('yes\n');
    await canaryUntouched();
    // The container cannot see the store (it is not under any folder it mounts).
    expect((await sh(sandbox, `ls ${snapshotRoot(test.instance)}`)).exitCode).not.toBe(0);
  });
});

function storeBytesNow(test: TestInstance): Promise<number> {
  return storeBytes(test.instance);
}
