import { appendFile, copyFile, cp, mkdir, mkdtemp, rename, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { bundleIdentity } from '../../../../src/kernel/build.js';
import { kernelHealth } from '../../../../src/kernel/client/link.js';
import { kernelSocketPath } from '../../../../src/kernel/socket-path.js';
import { createLogger } from '../../../../src/log/logger.js';
import { KernelSupervisor } from '../../../../src/kernel/supervisor/kernel-supervisor.js';
import { describeWithEngine } from '../../../helpers/engine.js';
import { type TickTestInstance, isAlive, tickTestInstance } from '../tick-helpers.js';
import { pollUntil } from '../../../helpers/poll.js';
import { type KernelClient, expectNothingLost, startPrinter, stdioClient } from './kernel-clients.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/**
 * An installation of agent-kernel of its own (the built bin and bundles, package.json, assets,
 * the repository's node_modules), so that the test can install a newer build over it as npm
 * would, without touching the build every other test runs.
 */
async function installedCopy(): Promise<{ root: string; bin: string; upgrade(): Promise<void> }> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'ak-install-'));
  await mkdir(path.join(root, 'dist', 'cli'), { recursive: true });
  await mkdir(path.join(root, 'dist', 'bundle'), { recursive: true });
  for (const file of ['cli/agent-kernel.js', 'cli/run-bundle.js', 'bundle/agent-kernel.cjs', 'bundle/serve-bridge.cjs']) {
    await copyFile(path.join(ROOT, 'dist', file), path.join(root, 'dist', file));
  }
  await copyFile(path.join(ROOT, 'package.json'), path.join(root, 'package.json'));
  await cp(path.join(ROOT, 'assets'), path.join(root, 'assets'), { recursive: true });
  await symlink(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
  const bundle = path.join(root, 'dist', 'bundle', 'agent-kernel.cjs');
  return {
    root,
    bin: path.join(root, 'dist', 'cli', 'agent-kernel.js'),
    // A newer build: another bundle put in place by rename, as a package manager replaces files.
    async upgrade() {
      const next = `${bundle}.next`;
      await copyFile(bundle, next);
      await appendFile(next, '\n// a newer build\n');
      await rename(next, bundle);
    },
  };
}

/**
 * Upgrading agent-kernel under watch: a newer build on disk replaces the running kernel, but
 * never during a tick; the kernel stops gracefully, the new build's kernel re-adopts the
 * terminals, and a client's bridge (a tick's, a person's) reconnects with nothing lost.
 */
describeWithEngine('upgrading agent-kernel under watch', () => {
  let t: TickTestInstance | undefined;
  let install: Awaited<ReturnType<typeof installedCopy>> | undefined;
  let supervisor: KernelSupervisor | undefined;
  let client: KernelClient | undefined;

  afterEach(async () => {
    await client?.close();
    client = undefined;
    await supervisor?.stop();
    supervisor = undefined;
    await t?.dispose();
    t = undefined;
    if (install) await rm(install.root, { recursive: true, force: true });
    install = undefined;
  });

  it('replaces the running kernel with the new build once no tick runs; the bridge reconnects and no line is lost', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({});
    install = await installedCopy();
    let tickRunning = false;
    const logger = createLogger({ process: `watch-${t.name}`, logDir: t.instance.paths.logs, stderr: false });
    supervisor = new KernelSupervisor({ instance: t.instance, env: t.env, logger, tickRunning: () => tickRunning, bin: install.bin, heartbeatMs: 500 });
    supervisor.start();
    const kernel = supervisor;
    await pollUntil(() => kernel.status().state === 'ready' && kernel.status().terminalsState === 'ready', 'the kernel ready', { timeoutMs: 120_000 });
    const old = kernel.status().pid!;

    client = await stdioClient(install.bin, t.dataDir, t.env);
    const printer = await startPrinter(client.call);

    // A newer build lands during a tick: the kernel serving that tick stays until the tick ends.
    tickRunning = true;
    await install.upgrade();
    await pollUntil(() => kernel.status().upgradePending === true, 'the newer build noticed', { timeoutMs: 10_000 });
    for (let i = 0; i < 3; i++) await printer.look();
    expect(kernel.status()).toMatchObject({ pid: old, restarts: 0, upgradePending: true });

    tickRunning = false;
    await pollUntil(() => kernel.status().restarts === 1 && kernel.status().state === 'ready' && kernel.status().pid !== old, "the new build's kernel", { timeoutMs: 120_000 });
    await pollUntil(() => !isAlive(old), 'the old kernel stopped', { timeoutMs: 10_000 });
    expect(kernel.status().lastExit).toMatch(/replaced by a newer build/);
    expect(kernel.status().upgradePending).toBeUndefined();
    expect((await kernelHealth(kernelSocketPath(t.instance.paths.stateRoot, t.env))).build).toBe(bundleIdentity(install.bin));

    await printer.loginAgain();
    await printer.look();
    expectNothingLost(await printer.finish());
  });
});
