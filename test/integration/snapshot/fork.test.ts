import { execFile } from 'node:child_process';
import { lstat, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { instancePaths } from '../../../src/config/paths.js';
import { loadRegistry } from '../../../src/config/registry.js';
import { containerName } from '../../../src/sandbox/container/container.js';
import { DockerSandbox } from '../../../src/sandbox/docker-sandbox.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import { silentLogger } from '../../../src/log/logger.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { pollUntil } from '../../helpers/poll.js';
import { removeEngineResources } from '../../helpers/test-instance.js';
import { KERNEL_RUNNER_BIN, type TickTestInstance, tickTestInstance } from '../runner/tick-helpers.js';

const run = promisify(execFile);
const exists = (file: string) => lstat(file).then(() => true, () => false);

describeWithEngine('kernel-runner fork: a new instance from a snapshot, changing apart from its parent', () => {
  let t: TickTestInstance | undefined;
  let forkName: string | undefined;

  const runner = (env: NodeJS.ProcessEnv, ...args: string[]) =>
    run(process.execPath, [KERNEL_RUNNER_BIN, ...args], { env }).then(
      ({ stdout, stderr }) => ({ stdout, stderr, code: 0 }),
      (error: { stdout: string; stderr: string; code: number }) => ({ stdout: error.stdout, stderr: error.stderr, code: error.code }),
    );

  afterEach(async () => {
    if (t && forkName) {
      await runner(t.env, 'rm', forkName, '--data');
      await removeEngineResources(forkName);
    }
    await t?.dispose();
    t = undefined;
    forkName = undefined;
  });

  it('forks the container and data directory, leaves the parent alone, and both tick apart', { timeout: 600_000 }, async () => {
    t = await tickTestInstance({});
    const name = t.name;
    const fork = `${name}-b`;
    forkName = fork;
    const forkDir = path.join(path.dirname(t.dataDir), fork);
    await writeFile(t.instance.paths.startup, JSON.stringify({ terminals: [{ tty: 0 }] }));
    const parentBox = await openSandbox(t.instance, { logger: silentLogger() });
    const sh = async (box: { run: DockerSandbox['run'] }, script: string) => {
      const result = await box.run(['sh', '-c', script], { user: '0' });
      return { code: result.exitCode, out: result.stdout.trim() };
    };
    expect((await sh(parentBox, 'echo before-fork > /root/shared && echo apt-state > /etc/forked.conf')).code).toBe(0);
    await writeFile(path.join(t.dataDir, 'shared.txt'), 'before the fork\n');
    expect((await runner(t.env, 'snapshot', name, '-m', 'to fork')).code).toBe(0);

    const forked = await runner(t.env, 'fork', name, fork);
    expect(forked.stderr).toContain('linking snapshot 1');
    expect(forked.stdout).toMatch(new RegExp(`^Forked ${name} into ${fork} from its snapshot 1 .* restored and checked against their digests`));
    expect(forked.stdout).toContain(`Data directory: ${forkDir}`);
    expect((await loadRegistry(t.env)).instances[fork]?.dir).toBe(forkDir);

    const engine = await connectEngine();
    const forkBox = new DockerSandbox({ engine, containerName: containerName(fork), cwd: '/' });
    expect(await sh(forkBox, 'cat /root/shared /etc/forked.conf')).toEqual({ code: 0, out: 'before-fork\napt-state' });
    expect(await readFile(path.join(forkDir, 'shared.txt'), 'utf8')).toBe('before the fork\n');
    expect(await readFile(path.join(forkDir, 'system', 'startup.json'), 'utf8')).toContain('"tty":0');

    // Apart from here on: each one's writes stay its own.
    await sh(parentBox, 'echo p > /root/only-parent');
    await sh(forkBox, 'echo f > /root/only-fork');
    await writeFile(path.join(t.dataDir, 'only-parent.txt'), 'p');
    await writeFile(path.join(forkDir, 'only-fork.txt'), 'f');
    expect((await sh(forkBox, 'test -e /root/only-parent')).code).not.toBe(0);
    expect((await sh(parentBox, 'test -e /root/only-fork')).code).not.toBe(0);
    expect(await exists(path.join(forkDir, 'only-parent.txt'))).toBe(false);
    expect(await exists(path.join(t.dataDir, 'only-fork.txt'))).toBe(false);
    // The parent's own snapshots are untouched: the fork's store has its own copy (links) of the one it came from.
    expect((await runner(t.env, 'snapshots', name)).stdout).toMatch(/^1 .* manual .* to fork\n/m);
    expect((await runner(t.env, 'snapshots', fork)).stdout).toMatch(new RegExp(`^1 .* fork .* fork of ${name}'s snapshot 1 \\(to fork\\)`, 'm'));

    // Both tick: each one's terminal runs in its own container and writes its own data directory.
    for (const [who, dir] of [[name, t.dataDir], [fork, forkDir]] as const) {
      const env = { ...t.env, FAKE_CLAUDE_COMMAND: `echo ticked-${who} > ${dir}/ticked.txt` };
      const tick = await runner(env, 'tick', who, '--message', '[fake:start-command] go');
      expect(tick.code, tick.stderr).toBe(0);
      await pollUntil(async () => (await readFile(path.join(dir, 'ticked.txt'), 'utf8').catch(() => '')) === `ticked-${who}\n`, `${who}'s tick to write its data directory`, { timeoutMs: 60_000 });
    }
    expect(await exists(path.join(forkDir, 'only-parent.txt'))).toBe(false);
    // The fork's first tick was told what it is.
    const forkPaths = instancePaths(fork, forkDir, t.env);
    const delivered = await readFile(path.join(forkPaths.logs, 'tick-001.jsonl'), 'utf8');
    expect(delivered).toContain(`a fork of ${name}`);

    // Removing the fork leaves the parent whole.
    const removed = await runner(t.env, 'rm', fork, '--data');
    expect(removed.code, removed.stderr).toBe(0);
    forkName = undefined;
    expect(await exists(forkDir)).toBe(false);
    expect(await readFile(path.join(t.dataDir, 'shared.txt'), 'utf8')).toBe('before the fork\n');
    expect(await sh(parentBox, 'cat /root/shared /root/only-parent')).toEqual({ code: 0, out: 'before-fork\np' });
    expect((await runner(t.env, 'rollback', name, '1')).code).toBe(0);
  });

  it('fork --from ID starts from that snapshot, not the newest', { timeout: 600_000 }, async () => {
    t = await tickTestInstance({});
    const name = t.name;
    const fork = `${name}-old`;
    forkName = fork;
    const parentBox = await openSandbox(t.instance, { logger: silentLogger() });
    const version = async (v: string) => {
      expect((await parentBox.run(['sh', '-c', `echo ${v} > /root/version`], { user: '0' })).exitCode).toBe(0);
      await writeFile(path.join(t?.dataDir ?? '', 'version.txt'), `${v}\n`);
      expect((await runner(t?.env ?? {}, 'snapshot', name, '-m', v)).code).toBe(0);
    };
    await version('one');
    await version('two');
    const forked = await runner(t.env, 'fork', name, fork, '--from', '1');
    expect(forked.code, forked.stderr).toBe(0);
    expect(forked.stdout).toMatch(new RegExp(`^Forked ${name} into ${fork} from its snapshot 1 `));
    const forkDir = path.join(path.dirname(t.dataDir), fork);
    expect(await readFile(path.join(forkDir, 'version.txt'), 'utf8')).toBe('one\n');
    const forkBox = new DockerSandbox({ engine: await connectEngine(), containerName: containerName(fork), cwd: '/' });
    expect((await forkBox.run(['cat', '/root/version'], { user: '0' })).stdout).toBe('one\n');
    // The parent stays at two.
    expect((await parentBox.run(['cat', '/root/version'], { user: '0' })).stdout).toBe('two\n');
    const missing = await runner(t.env, 'fork', name, `${name}-none`, '--from', '9');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('No snapshot 9');
    expect(await exists(path.join(path.dirname(t.dataDir), `${name}-none`))).toBe(false);
  });

  it('refuses a name or a directory that is taken, saying what to do, and leaves nothing behind', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({});
    const name = t.name;
    const none = await runner(t.env, 'fork', name, `${name}-x`);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain(`${name} has no snapshot yet: kernel-runner snapshot ${name} takes one`);
    expect(await exists(path.join(path.dirname(t.dataDir), `${name}-x`))).toBe(false);

    expect((await runner(t.env, 'snapshot', name)).code).toBe(0);
    const self = await runner(t.env, 'fork', name, name);
    expect(self.stderr).toContain('A fork needs a name of its own');
    const taken = path.join(path.dirname(t.dataDir), 'taken');
    await mkdir(taken);
    const busy = await runner(t.env, 'fork', name, 'taken');
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain(`${taken} exists already, and a fork gets a new data directory: pick another place with --data DIR`);
    const inside = await runner(t.env, 'fork', name, `${name}-in`, '--data', path.join(t.dataDir, 'sub'));
    expect(inside.stderr).toContain(`is inside ${name}'s data directory, which its container can write`);
    expect((await loadRegistry(t.env)).instances[`${name}-in`]).toBeUndefined();
    expect((await loadRegistry(t.env)).instances.taken).toBeUndefined();
  });
});
