import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { containerName } from '../../../src/sandbox/container/container.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import { type Engine, connectEngine } from '../../../src/sandbox/engine/engine.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { Budget, DEFAULT_LIMITS } from '../../../src/snapshot/budget.js';
import { readContainerTree, upperLayerOf } from '../../../src/snapshot/container-tree-read.js';
import type { Entry } from '../../../src/snapshot/manifest.js';
import { restoreSnapshot } from '../../../src/snapshot/restore.js';
import { hashSink } from '../../../src/snapshot/store.js';
import { snapshotRoot, storeOf, takeSnapshot } from '../../../src/snapshot/take.js';
import { compareTrees } from '../../../src/snapshot/verify.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { pollUntil } from '../../helpers/poll.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

vi.setConfig({ testTimeout: 300_000 });

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RACER = readFileSync(path.join(ROOT, 'test', 'fixtures', 'escape', 'tree-racer.py'), 'utf8');
const SECRET = 'CANARY-upper-layer-secret-5e1d';
const logger = silentLogger();

/** What an agent leaves in its container: added folders, a changed image file, deleted ones, a folder of the image wiped and made again (opaque). */
const PLANT = [
  'mkdir -p /opt/up/sub',
  'head -c 200000 /dev/urandom > /opt/up/blob',
  'ln /opt/up/blob /opt/up/blob-hard',
  'echo a > /opt/up/sub/a && chown 1234:4321 /opt/up/sub/a && chmod 4755 /opt/up/sub/a',
  'ln -s /etc/shadow /opt/up/link',
  'mkfifo /opt/up/fifo',
  'echo "# agent" >> /etc/profile',
  'rm /etc/issue',
  'rm -rf /etc/apt/apt.conf.d && mkdir /etc/apt/apt.conf.d && echo mine > /etc/apt/apt.conf.d/50mine',
].join(' && ');

function sha(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

const onOverlay2 = (() => {
  try {
    return execFileSync('docker', ['info', '--format', '{{.Driver}}'], { encoding: 'utf8', timeout: 30_000 }).trim() === 'overlay2';
  } catch {
    return false;
  }
})();

/** Entries as a restore compares them (mtime aside). */
function shape(entries: readonly Entry[]) {
  return entries.map(({ path: p, type, mode, uid, gid, digest, target }) => ({ path: p, type, mode, uid, gid, digest, target })).sort((a, b) => (a.path < b.path ? -1 : 1));
}

function budgetOf(test: TestInstance): Budget {
  return new Budget(DEFAULT_LIMITS, snapshotRoot(test.instance));
}

/**
 * On a local overlay2 Docker the container's changes are read from its upper layer on the host
 * (a walk that follows no link), and a file whose change stamp is unchanged is not read again.
 * That folder is the agent's: this checks the walk gives what the engine gives, that a changed
 * file is read again whatever its mtime says, that a restore of it is whole, and that links and
 * folders swapped for links to the host are never followed.
 */
// Skipped only outside CI on another storage driver; CI's engine is overlay2, and anything else there fails.
(onOverlay2 || process.env.CI === 'true' ? describeWithEngine : describe.skip)('snapshot: the container read from its upper layer', () => {
  let test: TestInstance;
  let sandbox: Sandbox;
  let engine: Engine;
  let canaryDir: string;

  async function sh(script: string): Promise<string> {
    const result = await sandbox.run(['sh', '-c', script], { user: '0', timeoutMs: 120_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    return result.stdout;
  }

  beforeAll(async () => {
    canaryDir = await mkdtemp(path.join(os.tmpdir(), 'ak-canary-upper-'));
    await writeFile(path.join(canaryDir, 'secret'), `${SECRET}\n`);
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger });
    engine = await connectEngine();
  });
  afterAll(async () => {
    await test?.cleanup();
    if (canaryDir) await rm(canaryDir, { recursive: true, force: true });
  });

  it('reads what the engine reads; an unchanged file is not read again, a changed one is even with its mtime set back; a restore is whole', async () => {
    await sh(PLANT);
    const name = containerName(test.instance.name);
    const info = await engine.docker.getContainer(name).inspect();
    expect(await upperLayerOf(engine, info), 'the upper layer of a local overlay2 container').toBeDefined();
    const fromLayer = await readContainerTree(engine, name, { sink: hashSink, budget: budgetOf(test), skipped: [] });
    const fromEngine = await readContainerTree(engine, name, { sink: hashSink, budget: budgetOf(test), skipped: [], via: 'engine' });
    expect(shape(fromLayer.entries)).toEqual(shape(fromEngine.entries));
    expect(fromLayer.deleted.sort()).toEqual(fromEngine.deleted.sort());
    expect(fromLayer.entries.find((e) => e.path === 'opt/up/sub/a')).toMatchObject({ mode: 0o4755 });
    expect(fromLayer.entries.find((e) => e.path === 'opt/up/link')).toMatchObject({ type: 'symlink', target: '/etc/shadow' });
    expect(fromLayer.entries.find((e) => e.path === 'opt/up/blob-hard')).toMatchObject({ type: 'hardlink', target: 'opt/up/blob' });

    // Stamps are kept only for files older than the walk by the racy window (2 s).
    await sh(`echo aaaa > ${test.dataDir}/same-size.txt`);
    const planted = Date.now();
    await pollUntil(() => Date.now() - planted > 2500, 'the planted files to be older than the racy window', { timeoutMs: 10_000 });
    const first = await takeSnapshot(test.instance, { trigger: 'manual' });
    const second = await takeSnapshot(test.instance, { trigger: 'manual' });
    expect(second.unread, 'files of the container not read again').toBeGreaterThanOrEqual(4);
    expect(second.newBytes).toBeLessThan(64 * 1024);
    expect(shape(second.container.entries)).toEqual(shape(first.container.entries));

    // The agent changes a file and sets its mtime back (same size): the stamp's ctime still moves.
    // `touch -r` puts back the mtime to the nanosecond: only the ctime tells.
    await sh('touch -r /opt/up/sub/a /tmp/mtime-a && printf b > /opt/up/sub/a && echo >> /opt/up/sub/a && chmod 4755 /opt/up/sub/a && touch -r /tmp/mtime-a /opt/up/sub/a');
    await sh(`cd ${test.dataDir} && touch -r same-size.txt /tmp/mtime-d && printf 'bbbb\\n' > same-size.txt && touch -r /tmp/mtime-d same-size.txt`);
    // Older than the racy window again, so that only the stamp can tell (a file changed just before is read anyway).
    const changed = Date.now();
    await pollUntil(() => Date.now() - changed > 2500, 'the changed files to be older than the racy window', { timeoutMs: 10_000 });
    const third = await takeSnapshot(test.instance, { trigger: 'manual' });
    expect(third.container.entries.find((e) => e.path === 'opt/up/sub/a')?.digest).toBe(sha('b\n'));
    expect(third.data.find((e) => e.path === 'same-size.txt')?.digest).toBe(sha('bbbb\n'));

    // Wreck it, then roll back to the first: every file back and checked (against the engine's own view too).
    await sh('rm -rf /opt/up && echo back > /etc/issue && rm -rf /etc/apt/apt.conf.d/50mine && echo x > /etc/profile');
    await restoreSnapshot(test.instance, first.id, { logger });
    sandbox = await openSandbox(test.instance, { logger });
    expect(sha(Buffer.from(await sh('base64 -w0 /opt/up/blob'), 'base64'))).toBe(first.container.entries.find((e) => e.path === 'opt/up/blob')?.digest);
    expect((await sh('stat -c "%h %a %u:%g" /opt/up/blob /opt/up/sub/a')).split('\n').slice(0, 2)).toEqual(['2 644 0:0', '1 4755 1234:4321']);
    expect(await sh('readlink /opt/up/link; test -p /opt/up/fifo && echo fifo; ls /etc/apt/apt.conf.d; test -e /etc/issue || echo no-issue')).toBe('/etc/shadow\nfifo\n50mine\nno-issue\n');
    const viaEngine = await readContainerTree(engine, containerName(test.instance.name), { sink: hashSink, budget: budgetOf(test), skipped: [], via: 'engine' });
    expect(compareTrees(first.container.entries, viaEngine.entries, { owners: true, extras: false })).toEqual([]);
  });

  it('folders swapped for links to a host folder while the layer is walked: nothing outside is read', async () => {
    const where = '/opt/hostile';
    expect((await sandbox.run(['python3', '-c', RACER, 'plant', where, canaryDir, '7'], { user: '0' })).exitCode).toBe(0);
    const countFile = '/tmp/swaps';
    const race = sandbox.run(['python3', '-c', RACER, 'race', where, canaryDir, '20', countFile], { user: '0', timeoutMs: 120_000 });
    await pollUntil(async () => Number((await sandbox.run(['sh', '-c', `cat ${countFile} 2>/dev/null`], { user: '0' })).stdout.trim()) > 0, 'the swapper running', { timeoutMs: 60_000 });
    const secret = sha(`${SECRET}\n`);
    // The walk itself, with the container running (a snapshot also pauses it: this is the layer under that).
    for (let round = 0; round < 5; round++) {
      const tree = await readContainerTree(engine, containerName(test.instance.name), { sink: hashSink, budget: budgetOf(test), skipped: [] });
      expect(tree.entries.some((e) => e.digest === secret)).toBe(false);
      expect(tree.entries.every((e) => !e.path.startsWith('/') && !e.path.split('/').includes('..'))).toBe(true);
    }
    await takeSnapshot(test.instance, { trigger: 'manual' });
    await race;
    const { store } = storeOf(test.instance);
    for (const prefix of await readdir(store.objects)) {
      for (const object of await readdir(path.join(store.objects, prefix))) expect((await readFile(path.join(store.objects, prefix, object))).includes(SECRET)).toBe(false);
    }
    expect(await readFile(path.join(canaryDir, 'secret'), 'utf8')).toBe(`${SECRET}\n`);
  });
});
