import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';
import { KERNEL_RUNNER_BIN } from '../runner/tick-helpers.js';

vi.setConfig({ testTimeout: 240_000 });

const run = promisify(execFile);
const logger = silentLogger();

async function runner(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return run(process.execPath, [KERNEL_RUNNER_BIN, ...args], { env: process.env }).then(
    ({ stdout, stderr }) => ({ stdout, stderr, code: 0 }),
    (error: { stdout: string; stderr: string; code: number }) => ({ stdout: error.stdout, stderr: error.stderr, code: error.code }),
  );
}

async function sh(sandbox: Sandbox, script: string): Promise<string> {
  const result = await sandbox.run(['sh', '-c', script], { user: '0' });
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

/** A package built and installed offline inside the container (dpkg-deb, dpkg -i). */
const INSTALL_DEB = [
  'mkdir -p /tmp/deb/DEBIAN /tmp/deb/usr/bin',
  'printf "Package: hello-snap\\nVersion: 1.0\\nArchitecture: all\\nMaintainer: t <t@t>\\nDescription: test\\n" > /tmp/deb/DEBIAN/control',
  'printf "#!/bin/sh\\necho hello-from-snap\\n" > /tmp/deb/usr/bin/hello-snap && chmod 755 /tmp/deb/usr/bin/hello-snap',
  'dpkg-deb --build /tmp/deb /root/hello-snap.deb >/dev/null && dpkg -i /root/hello-snap.deb >/dev/null && rm -rf /tmp/deb',
].join(' && ');

describeWithEngine('snapshot commands: snapshot, snapshots, diff, rollback, rm', () => {
  let test: TestInstance;
  let sandbox: Sandbox;

  beforeAll(async () => {
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger });
  });
  afterAll(async () => {
    await test?.cleanup();
  });

  it('saves a tick\'s package and files, shows what the next changed, and rolls it back', async () => {
    await sh(sandbox, INSTALL_DEB);
    await writeFile(path.join(test.dataDir, 'plan.md'), 'step one\n');
    const taken = await runner('snapshot', test.dataDir, '-m', 'after install');
    expect(taken.stderr).toBe('');
    expect(taken.stdout).toMatch(/^Snapshot 1 of .* taken in [0-9.]+ s: /);
    expect(taken.stdout).toContain(`kernel-runner rollback ${test.name} 1`);

    await sh(sandbox, 'dpkg -r hello-snap >/dev/null && echo broken > /etc/motd');
    await writeFile(path.join(test.dataDir, 'plan.md'), 'step two\n');
    expect((await runner('snapshot', test.dataDir)).code).toBe(0);

    const diff = await runner('snapshot', 'diff', test.dataDir, '1', '2');
    expect(diff.stdout).toContain('From snapshot 1 to 2:');
    expect(diff.stdout).toMatch(/Data directory \(0 added, 0 removed, 1 changed\):\n {2}~ plan\.md/);
    expect(diff.stdout).toMatch(/Packages \(dpkg\) \(0 added, 1 removed, 0 changed\):\n {2}- hello-snap 1\.0/);
    expect(diff.stdout).toMatch(/- usr\/bin\/hello-snap/);

    const list = await runner('snapshots', test.dataDir);
    expect(list.stdout).toMatch(/^ID +TIME +TRIGGER +TICK +SIZE +NEW +NOTE\n1 .* manual .* after install\n2 .* manual/);

    const back = await runner('rollback', test.dataDir, '1');
    expect(back.stderr).toContain('removing the container');
    expect(back.stdout).toMatch(/^Rolled .* back to snapshot 1 .*restored and checked against their digests/);
    expect(back.stdout).toContain('The state before the rollback is snapshot 3');
    sandbox = await openSandbox(test.instance, { logger });
    expect(await sh(sandbox, 'hello-snap')).toBe('hello-from-snap\n');
    expect(await sh(sandbox, 'dpkg-query -W -f=\'${Status}\' hello-snap')).toBe('install ok installed');
    expect(await readFile(path.join(test.dataDir, 'plan.md'), 'utf8')).toBe('step one\n');

    const removed = await runner('snapshot', 'rm', test.dataDir, '2');
    expect(removed.stdout).toMatch(/^Removed snapshot 2 of .* freed/);
    expect((await runner('snapshots', test.dataDir)).stdout).not.toMatch(/^2 +20/m);
    const missing = await runner('rollback', test.dataDir, '2');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('No snapshot 2');
  });
});
