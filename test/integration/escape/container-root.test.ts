import { lstat, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { writePaused } from '../../../src/runner/tick/paused.js';
import { containerUp } from '../../../src/sandbox/container/container.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { type EngineBoundary, describeBoundary, engineBoundary } from '../../../src/sandbox/container/user-namespace.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance, withTestBases } from '../../helpers/test-instance.js';

const inCi = process.env.CI === 'true' || process.env.CI === '1';

/**
 * The layer under the hardening: root in the agent's container is not root on the host. CI runs
 * the whole suite on the engine scripts/ensure-engine.sh starts (dockerd --userns-remap), so there
 * this must hold; on an engine without a boundary (a rootful engine someone else started) it is
 * skipped, and doctor says so.
 */
describeWithEngine('escape: container root is not host root', () => {
  let test: TestInstance;
  let sandbox: Sandbox;
  let boundary: EngineBoundary;
  const agent = async (script: string) => {
    const result = await sandbox.run(['sh', '-c', script]);
    return { code: result.exitCode, out: (result.stdout + result.stderr).trim() };
  };

  beforeAll(async () => {
    boundary = await engineBoundary(await connectEngine());
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    // A file the host made as root before the container came up, like kernel-runner init does.
    await writeFile(path.join(test.dataDir, 'made-by-init'), 'init\n');
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
  });
  afterAll(async () => {
    await test?.cleanup();
  });

  it('the engine gives a second boundary (CI runs under the one ensure-engine.sh starts)', (ctx) => {
    // CI's Podman pass (AGENT_KERNEL_ENGINE=podman) runs rootful Podman, which has none: doctor must say so plainly.
    if (process.env.AGENT_KERNEL_ENGINE === 'podman') {
      expect(describeBoundary(boundary.kind)).toMatch(/^none: root in the container is root on the host/);
      return;
    }
    if (boundary.kind === 'none' && !inCi) ctx.skip();
    expect(boundary.kind).not.toBe('none');
  });

  it('a file container root creates in the data directory is not owned by host root, and its set-uid bit makes no host root program', async (ctx) => {
    if (boundary.kind !== 'userns-remap') ctx.skip();
    const made = await agent(`cp /bin/sh ${test.dataDir}/rootshell && chmod 4755 ${test.dataDir}/rootshell && mkdir ${test.dataDir}/by-root && id -u`);
    expect(made).toEqual({ code: 0, out: '0' });
    for (const entry of ['rootshell', 'by-root']) {
      const info = await lstat(path.join(test.dataDir, entry));
      expect([entry, info.uid, info.gid]).toEqual([entry, boundary.hostIds!.uid, boundary.hostIds!.gid]);
    }
    expect((await agent('cat /proc/self/uid_map')).out.split(/\s+/)).toEqual(['0', String(boundary.hostIds!.uid), String(boundary.hostIds!.size)]);
  });

  it('container root cannot act on host-root files: it can neither write, chmod nor chown one the host made in the data directory', async (ctx) => {
    if (boundary.kind !== 'userns-remap') ctx.skip();
    // Made by the host as root after the container started (a bind mount shows it at once).
    const hostFile = path.join(test.dataDir, 'host-root-file');
    await writeFile(hostFile, 'host\n', { mode: 0o644 });
    expect((await lstat(hostFile)).uid).toBe(0);
    const tries = await agent(
      `for try in "echo agent >> ${hostFile}" "chmod 666 ${hostFile}" "chown 0:0 ${hostFile}"; do if sh -c "$try" 2>/dev/null; then echo "did: $try"; fi; done; echo done`,
    );
    expect(tries.out).toBe('done');
    expect(await readFile(hostFile, 'utf8')).toBe('host\n');
    expect((await lstat(hostFile)).mode & 0o777).toBe(0o644);
  });

  it('the data directory is container root\'s: what init made before is its own, and what the host adds later (a paused file) is too', async (ctx) => {
    if (boundary.kind !== 'userns-remap') ctx.skip();
    expect((await lstat(test.dataDir)).uid).toBe(boundary.hostIds!.uid);
    expect((await lstat(path.join(test.dataDir, 'made-by-init'))).uid).toBe(boundary.hostIds!.uid);
    // The host's writes into the data directory go through untrusted-write (send now queues host-private mail).
    await writePaused(test.instance.paths, 'paused by the host');
    const paused = await agent(`f=${test.instance.paths.paused}; stat -c '%u' "$f" && echo edited >> "$f" && echo ok`);
    expect(paused.out).toBe('0\nok');
    await rm(test.instance.paths.paused, { force: true });
  });

  it('container.boundary "none" gives the operator host root back for one instance (the remapping off), its egress link too', async (ctx) => {
    if (boundary.kind !== 'userns-remap') ctx.skip();
    // allowlist: the egress link joins the container's network namespace, from the same user namespace.
    await writeFile(test.instance.paths.operatorConfig, JSON.stringify(withTestBases({ container: { boundary: 'none' } })));
    const instance = await test.reload();
    // As `container up` does: a changed boundary recreates the container (a server start keeps a running one).
    await containerUp(await connectEngine(), instance, { logger: silentLogger(), recreateForConfig: true });
    const none = await openSandbox(instance, { logger: silentLogger() });
    const result = await none.run(['sh', '-c', `touch ${test.dataDir}/made-without-boundary && cat /proc/self/uid_map`]);
    expect(result.stdout.trim().split(/\s+/)).toEqual(['0', '0', '4294967295']);
    expect((await lstat(path.join(test.dataDir, 'made-without-boundary'))).uid).toBe(0);
  });
});
