import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { containerName } from '../../../src/sandbox/container/container.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { BIN, connectStdio, ensureBuilt, textOf, waitFor } from './helpers.js';

/**
 * Exactly one owner per instance, whatever the paths: a second `serve` of the same instance
 * started with other state and config directories (an MCP client configured without `env`)
 * never takes over or recreates the container. It is refused with an error that names the
 * owner's state directory, or (same state directory) goes through the running kernel.
 */
describeWithEngine('a second server of the same instance with other state and config directories', () => {
  let test: TestInstance;
  let other: string;
  let kernel: ChildProcess | undefined;

  beforeEach(async () => {
    await ensureBuilt();
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    other = await mkdtemp(path.join(os.tmpdir(), 'ak-other-'));
  });
  afterEach(async () => {
    if (kernel && kernel.exitCode === null) {
      const exited = new Promise((r) => kernel!.once('exit', r));
      kernel.kill('SIGTERM');
      await exited;
    }
    kernel = undefined;
    await test.cleanup();
    await rm(other, { recursive: true, force: true });
  });

  const containerId = async () => (await (await connectEngine()).docker.getContainer(containerName(test.name)).inspect()).Id;
  // Another config home (no operator file: every default, a network unlike the first's) and another state home.
  const elsewhere = () => ({ AGENT_KERNEL_STATE_DIR: path.join(other, 'state'), AGENT_KERNEL_CONFIG_DIR: path.join(other, 'config') });

  it('is refused with INSTANCE_OWNED naming the owner; the first server\'s terminals and files go on', { timeout: 240_000 }, async () => {
    const first = await connectStdio(test.dataDir);
    try {
      await first.ok('login');
      await first.ok('wait', { timeout: 5 });
      await first.ok('type', { tty: 0, expect: 'bash', text: 'for i in $(seq 1 100000); do echo tick-$i; sleep 0.2; done' });
      await waitFor(first.call, /tick-2/);
      const id = await containerId();
      const screen = path.join(test.instance.paths.tty(0), 'screen');

      const second = await connectStdio(test.dataDir, elsewhere());
      try {
        const login = await second.call('login');
        expect(login.isError).toBe(true);
        expect(textOf(login)).toContain('INSTANCE_OWNED');
        expect(textOf(login)).toContain(test.instance.paths.stateRoot);
        expect(textOf(login)).toContain(`AGENT_KERNEL_STATE_DIR=${path.dirname(path.dirname(test.instance.paths.stateRoot))}`);
      } finally {
        await second.close();
      }

      // Nothing changed for the first: same container, its command still prints, its files still move.
      expect(await containerId()).toBe(id);
      const before = await readFile(screen, 'utf8');
      const later = await waitFor(first.call, /tick-\d+/);
      expect(later).toMatch(/tick-\d+/);
      await expect.poll(async () => (await readFile(screen, 'utf8')) !== before, { timeout: 20_000 }).toBe(true);
      await first.call('type', { tty: 0, expect: 'bash', text: 'C-c' });
    } finally {
      await first.close();
    }
  });

  it('goes through the kernel when the state directory is the same and only the config directory differs', { timeout: 240_000 }, async () => {
    kernel = spawn(process.execPath, [BIN, 'kernel', test.dataDir], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    kernel.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    await expect.poll(() => out, { timeout: 60_000 }).toMatch(/^READY \//);
    const first = await connectStdio(test.dataDir);
    try {
      await first.ok('login');
      await first.ok('wait', { timeout: 5 });
      await first.ok('type', { tty: 0, expect: 'bash', text: 'echo before-the-second' });
      await waitFor(first.call, /before-the-second/);
      const id = await containerId();

      const second = await connectStdio(test.dataDir, { AGENT_KERNEL_CONFIG_DIR: elsewhere().AGENT_KERNEL_CONFIG_DIR });
      try {
        // It is a session of the same kernel: it sees the same terminals, and observes (the first is the agent).
        const login = await second.ok('login');
        expect(login.structuredContent).toMatchObject({ role: 'observer', terminals: [{ tty: 0 }] });
      } finally {
        await second.close();
      }
      expect(await containerId()).toBe(id);
      await first.ok('type', { tty: 0, expect: 'bash', text: 'echo after-the-second' });
      await waitFor(first.call, /after-the-second/);
    } finally {
      await first.close();
    }
  });
});
