import { createHash } from 'node:crypto';
import { lstat, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { isCodedError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log/logger.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { restoreSnapshot } from '../../../src/snapshot/restore.js';
import { storeOf, takeSnapshot } from '../../../src/snapshot/take.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

vi.setConfig({ testTimeout: 240_000 });

const logger = silentLogger();

/** What the agent does in its container: install outside the data directory, delete from the image, write the data directory. */
const TICK_ONE = [
  'mkdir -p /root/notes /opt/tool/bin',
  'echo "remember me" > /root/notes/a.txt',
  'head -c 300000 /dev/urandom > /opt/tool/bin/blob',
  'printf "#!/bin/sh\\necho tool-ok\\n" > /opt/tool/bin/tool && chmod 4755 /opt/tool/bin/tool',
  'ln -s /opt/tool/bin/tool /usr/local/bin/tool',
  'ln /opt/tool/bin/blob /opt/tool/bin/blob-hard',
  'echo "setting=1" > /etc/agent.conf',
  'rm -f /etc/issue',
  'mkdir -p notes && echo "data one" > notes/d.txt && ln -s d.txt notes/link',
].join(' && ');

const TICK_TWO = ['rm -rf /root/notes /opt/tool /usr/local/bin/tool /etc/agent.conf', 'echo issue-back > /etc/issue', 'echo "later" > /root/later', 'rm -rf notes && echo other > other.txt'].join(' && ');

function sha(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

async function sh(sandbox: Sandbox, script: string): Promise<string> {
  const result = await sandbox.run(['sh', '-c', script], { user: '0' });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

describeWithEngine('snapshot: take and restore an instance', () => {
  let test: TestInstance;
  let sandbox: Sandbox;

  beforeAll(async () => {
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger });
  });
  afterAll(async () => {
    await test?.cleanup();
  });

  it('brings back what the agent installed, deleted and wrote, checked file by file, and stores unchanged content once', async () => {
    await sh(sandbox, `cd ${test.dataDir} && ${TICK_ONE}`);
    const blobBefore = sha(Buffer.from(await sh(sandbox, 'base64 -w0 /opt/tool/bin/blob'), 'base64'));
    const first = await takeSnapshot(test.instance, { trigger: 'manual', note: 'after tick one' });
    expect(first.id).toBe('1');
    expect(first.container.deleted).toContain('etc/issue');
    expect(first.container.entries.map((e) => e.path)).toEqual(expect.arrayContaining(['root/notes/a.txt', 'opt/tool/bin/tool', 'usr/local/bin/tool', 'etc/agent.conf']));
    expect(first.container.entries.find((e) => e.path === 'opt/tool/bin/tool')?.mode).toBe(0o4755);

    // Nothing changed: the second snapshot adds (almost) nothing to the store.
    const second = await takeSnapshot(test.instance, { trigger: 'manual' });
    expect(second.newBytes).toBeLessThan(64 * 1024);
    expect(second.bytes).toBe(first.bytes);

    await sh(sandbox, `cd ${test.dataDir} && ${TICK_TWO}`);
    const report = await restoreSnapshot(test.instance, first.id, { logger });
    expect(report.id).toBe('1');
    sandbox = await openSandbox(test.instance, { logger });

    expect(await sh(sandbox, 'cat /root/notes/a.txt')).toBe('remember me\n');
    expect(await sh(sandbox, 'cat /etc/agent.conf')).toBe('setting=1\n');
    expect(await sh(sandbox, 'tool')).toBe('tool-ok\n');
    expect((await sh(sandbox, 'stat -c %a /opt/tool/bin/tool')).trim()).toBe('4755');
    expect((await sh(sandbox, 'stat -c %h /opt/tool/bin/blob')).trim()).toBe('2');
    expect(sha(Buffer.from(await sh(sandbox, 'base64 -w0 /opt/tool/bin/blob'), 'base64'))).toBe(blobBefore);
    expect(await sandbox.run(['test', '-e', '/etc/issue'])).toMatchObject({ exitCode: 1 });
    expect(await sandbox.run(['test', '-e', '/root/later'])).toMatchObject({ exitCode: 1 });
    expect(await readFile(path.join(test.dataDir, 'notes', 'd.txt'), 'utf8')).toBe('data one\n');
    expect(await readlink(path.join(test.dataDir, 'notes', 'link'))).toBe('d.txt');
    await expect(lstat(path.join(test.dataDir, 'other.txt'))).rejects.toThrow();
    // The store is host-private.
    expect((await stat(storeOf(test.instance).store.root)).mode & 0o777).toBe(0o700);
  });

  it('refuses a snapshot whose stored content was tampered with, saying what differs', async () => {
    const snap = await takeSnapshot(test.instance, { trigger: 'manual' });
    const { store } = storeOf(test.instance);
    const victim = snap.data.find((e) => e.path === 'notes/d.txt');
    expect(victim?.digest).toBeDefined();
    const file = store.path(victim?.digest as string);
    // Same size, other bytes: only the digest check can see it.
    await import('node:fs/promises').then(({ chmod }) => chmod(file, 0o600));
    await writeFile(file, 'data two\n');
    const error = await restoreSnapshot(test.instance, snap.id, { logger }).catch((e: unknown) => e);
    expect(isCodedError(error, 'SNAPSHOT_MISMATCH')).toBe(true);
    expect((error as Error).message).toMatch(/notes\/d\.txt: content differs/);
  });
});
