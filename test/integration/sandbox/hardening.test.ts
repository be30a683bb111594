import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';
import { pollUntil } from '../../helpers/poll.js';

/** CHOWN 0, DAC_OVERRIDE 1, FOWNER 3, FSETID 4, KILL 5, SETGID 6, SETUID 7: the default set. */
const DEFAULT_CAP_MASK = (1n << 0n) | (1n << 1n) | (1n << 3n) | (1n << 4n) | (1n << 5n) | (1n << 6n) | (1n << 7n);

/** What the engine itself mounts: kernel file systems, the root, DNS and host files, its init binary. */
const ENGINE_MOUNTS = /^\/(proc|sys|dev)(\/|$)|^\/$|^\/etc\/(hosts|hostname|resolv\.conf)$|^\/usr\/sbin\/docker-init$|^\/run\/(\.containerenv|podman-init)$/;

function field(status: string, name: string): string {
  const match = new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status);
  if (!match?.[1]) throw new Error(`no ${name} in /proc/self/status`);
  return match[1];
}

describeWithEngine('hardening, seen from inside the container', () => {
  let test: TestInstance;
  let sandbox: Sandbox;

  beforeAll(async () => {
    test = await createTestInstance({ config: { container: { pids_limit: 128, memory: '512m' } } });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
  });
  afterAll(async () => {
    await test?.cleanup();
  });

  it('has only the default capabilities, and no way to gain more', async () => {
    const status = (await sandbox.run(['cat', '/proc/self/status'])).stdout;
    expect(BigInt(`0x${field(status, 'CapEff')}`)).toBe(DEFAULT_CAP_MASK);
    expect(BigInt(`0x${field(status, 'CapBnd')}`)).toBe(DEFAULT_CAP_MASK);
    expect(field(status, 'NoNewPrivs')).toBe('1');
  });

  it('cannot mount, even as root', async () => {
    const result = await sandbox.run(['sh', '-c', 'id -u; mkdir -p /mnt/x && mount -t tmpfs none /mnt/x']);
    expect(result.stdout).toBe('0\n');
    expect(result.exitCode).not.toBe(0);
  });

  it('stops a fork bomb at the pids limit', async () => {
    const script = [
      'import os, signal',
      'kids = []',
      'try:',
      '    for _ in range(400):',
      '        pid = os.fork()',
      '        if pid == 0:',
      '            signal.pause()',
      '        kids.append(pid)',
      'except OSError as e:',
      '    print("refused after", len(kids), e.errno)',
      'for pid in kids:',
      '    os.kill(pid, signal.SIGKILL)',
      '    os.waitpid(pid, 0)',
    ].join('\n');
    const result = await sandbox.run(['python3', '-c', script], { timeoutMs: 30_000 });
    const match = /refused after (\d+)/.exec(result.stdout);
    expect(match, result.stdout + result.stderr).not.toBeNull();
    expect(Number(match?.[1])).toBeLessThan(128);
    const limit = await sandbox.run(['sh', '-c', 'cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max']);
    expect(limit.stdout.trim()).toBe('128');
  });

  it('has the memory cap', async () => {
    const result = await sandbox.run(['sh', '-c', 'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes']);
    expect(Number(result.stdout.trim())).toBe(512 * 1024 ** 2);
  });

  it('has no container engine socket anywhere; the data dir is the only writable host directory, the host-private views are read-only', async () => {
    const sockets = await sandbox.run(['sh', '-c', "find / \\( -path /proc -o -path /sys \\) -prune -o -type s -print 2>/dev/null; ls /var/run/docker.sock /run/docker.sock /run/podman/podman.sock 2>&1 || true"]);
    expect(sockets.stdout).not.toMatch(/^\/.*(docker|podman|containerd)\S*\.sock$/m);
    expect(sockets.stdout).toMatch(/No such file/);
    const mounts = (await sandbox.run(['cat', '/proc/self/mountinfo'])).stdout;
    expect(mounts).not.toMatch(/docker\.sock|podman\.sock|containerd\.sock/);
    const binds = mounts
      .split('\n')
      .map((line) => line.split(' '))
      .filter((fields) => fields[4] !== undefined && !ENGINE_MOUNTS.test(fields[4]))
      .map((fields) => `${fields[4]} ${(fields[5] ?? '').split(',')[0]}`);
    const shown = test.instance.paths.showToContainer.map((m) => `${m.target} ro`);
    expect(binds.sort()).toEqual([`${test.dataDir} rw`, ...shown].sort());
  });

  it('runs an init as PID 1 that reaps orphaned zombies', async () => {
    const init = (await sandbox.run(['cat', '/proc/1/comm'])).stdout.trim();
    expect(['docker-init', 'tini', 'catatonit', 'podman-init']).toContain(init);
    // The subshell exits at once; its child is orphaned to PID 1 and must be reaped when it ends.
    await sandbox.run(['sh', '-c', '(sleep 0.2 &) ; true']);
    let zombies = '';
    await pollUntil(
      async () => {
        zombies = (await sandbox.run(['sh', '-c', "ps -eo stat=,args= | grep '^Z' || true"])).stdout;
        const sleeping = (await sandbox.run(['sh', '-c', "ps -eo args= | grep -c '^sleep 0.2' || true"])).stdout.trim();
        return zombies === '' && sleeping === '0';
      },
      'the orphaned sleep to end and be reaped',
      { timeoutMs: 10_000, intervalMs: 100 },
    ).catch(() => undefined);
    expect(zombies).toBe('');
  });
});

describeWithEngine('hardening options: read-only root and no network', () => {
  let test: TestInstance;
  let sandbox: Sandbox;

  beforeAll(async () => {
    test = await createTestInstance({ config: { container: { read_only_root: true, network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
  });
  afterAll(async () => {
    await test?.cleanup();
  });

  it('cannot write the root file system, but can write /tmp, /run and the data dir', async () => {
    expect((await sandbox.run(['touch', '/usr/local/x'])).exitCode).not.toBe(0);
    for (const file of ['/tmp/x', '/run/x', `${test.dataDir}/x`]) {
      expect((await sandbox.run(['touch', file])).exitCode).toBe(0);
    }
  });

  it('has only the loopback interface', async () => {
    expect((await sandbox.run(['ls', '/sys/class/net'])).stdout.trim()).toBe('lo');
  });
});
