import { createHash } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensurePrivateSocketDir, kernelSocketPath } from '../../../src/kernel/socket-path.js';
import { hookSocketPath, listenHookChannel } from '../../../src/runner/hooks/hook-channel.js';

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

/**
 * Another local user (uid 65534, nobody) plants a folder, a file or a link at every socket path it
 * can predict in a shared folder, before the instance starts: the kernel's and the hook channel's
 * sockets still bind (in a folder of the owner's, 0700) and answer.
 */
(isRoot ? describe : describe.skip)('sockets no other user can take', () => {
  let shared: string;
  let env: NodeJS.ProcessEnv;
  let oldHookSocket: string;
  // A state path too long for a socket: the fallbacks are used.
  const stateRoot = path.join('/home', 'x'.repeat(120), 'instances', 'scout');

  beforeEach(async () => {
    shared = await mkdtemp(path.join(os.tmpdir(), 'ak-shared-'));
    // A shared folder, as /tmp is.
    await chmod(shared, 0o1777);
    env = { XDG_RUNTIME_DIR: shared };
    // Everything predictable, planted by nobody: the private folder's name and the next ones, and the old hook socket.
    const base = path.join(shared, 'agent-kernel');
    await mkdir(base, { mode: 0o777 });
    await chown(base, NOBODY, NOBODY);
    await writeFile(`${base}-1`, '');
    await chown(`${base}-1`, NOBODY, NOBODY);
    const theirs = path.join(shared, 'theirs');
    await mkdir(theirs, { mode: 0o700 });
    await chown(theirs, NOBODY, NOBODY);
    await symlink(theirs, `${base}-2`);
    const digest = createHash('sha256').update(path.resolve(path.join(stateRoot, 'private'))).digest('hex').slice(0, 16);
    oldHookSocket = path.join(os.tmpdir(), `agent-kernel-runner-${digest}.sock`);
    await mkdir(oldHookSocket, { recursive: true });
    await chown(oldHookSocket, NOBODY, NOBODY);
  });
  afterEach(async () => {
    await rm(shared, { recursive: true, force: true });
    await rm(oldHookSocket, { recursive: true, force: true });
  });

  async function answers(socketPath: string): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = net.connect(socketPath, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
  }

  it('the kernel socket binds in a folder of its own and answers', async () => {
    const socketPath = kernelSocketPath(stateRoot, env);
    expect(path.dirname(socketPath)).toBe(path.join(shared, 'agent-kernel-3'));
    ensurePrivateSocketDir(socketPath, true);
    const server = net.createServer((s) => s.end());
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socketPath, resolve));
    try {
      expect(await answers(socketPath)).toBe(true);
    } finally {
      server.close();
    }
  });

  it('the hook channel binds in a folder of its own and answers, whatever sits at the old /tmp name', async () => {
    const socketPath = hookSocketPath(path.join(stateRoot, 'private'), env);
    const channel = await listenHookChannel(socketPath, async () => ({ exitCode: 0 }), () => undefined);
    try {
      expect(path.dirname(channel.socketPath)).toBe(path.join(shared, 'agent-kernel-3'));
      expect(await answers(channel.socketPath)).toBe(true);
    } finally {
      await channel.close();
    }
  });
});
