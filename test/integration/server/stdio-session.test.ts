import { execFile } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { containerName } from '../../../src/sandbox/container/container.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { malformedArguments, seededRandom } from '../../unit/server/malformed-arguments.js';
import { connectStdio, ensureBuilt, isRunning, type StdioSession, textOf, waitFor } from './helpers.js';
import { hostView } from '../../../src/config/paths.js';

describeWithEngine('agent-kernel serve over stdio (real container, real tmux)', () => {
  let test: TestInstance;
  let session: StdioSession;

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance({
      files: {
        'system/startup.json': JSON.stringify({ terminals: [{ tty: 0, command: 'echo startup-ran; exec bash' }] }),
      },
    });
    await writeFile(test.instance.paths.state, JSON.stringify({ tick: 7, current: { tick: 7, started: new Date().toISOString(), status: 'running' } }));
    session = await connectStdio(test.dataDir);
  });
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await test?.cleanup();
  });

  it('answers the handshake at once and refuses tools before login', async () => {
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['login', 'open', 'type', 'wait', 'close']);
    const early = await session.call('open');
    expect(early.isError).toBe(true);
    expect(textOf(early)).toContain('call login() first');
  });

  it('runs a whole session: login, wait, type, wait, open, close', async () => {
    const login = await session.call('login');
    expect(login.isError, textOf(login)).toBeFalsy();
    expect(login.structuredContent).toMatchObject({ tick: 7, opened: [{ tty: 0 }], capacity: { used: 1, max: 20 } });
    expect(textOf(login)).toMatch(/Logged in to instance .*, tick 7/);

    await waitFor(session.call, /startup-ran/);
    const shell = await session.call('open');
    expect(shell.structuredContent).toMatchObject({ tty: 1, command: 'bash', capacity: { used: 2 } });
    await session.call('wait', { timeout: 5 });
    const typed = await session.call('type', { tty: 1, expect: 'bash', text: 'echo $((6*7)); false' });
    expect(typed.isError, textOf(typed)).toBeFalsy();
    const seen = await waitFor(session.call, /^42$/m);
    expect(seen).toMatch(/TTY 1 \| bash \| exit 1/);

    const refused = await session.call('type', { tty: 1, expect: 'python3', text: 'print(1)' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/EXPECT_MISMATCH[\s\S]*bash/);

    const opened = await session.call('open', { command: 'python3' });
    expect(opened.structuredContent).toMatchObject({ tty: 2, command: 'python3' });
    await waitFor(session.call, />>>/);
    await session.call('type', { tty: 2, expect: 'python3', text: 'print("py" * 3)' });
    await waitFor(session.call, /pypypy/);
    const closed = await session.call('close', { tty: 2 });
    expect(textOf(closed)).toMatch(/Closed TTY 2; its scrollback is archived at .*tty_2-tick-007/);
    expect(await readFile(hostView(test.instance.paths, (closed.structuredContent as { archivedTo: string }).archivedTo), 'utf8')).toContain('pypypy');
  });

  it('keeps a result under the size cap for huge output and points at the scrollback file', async () => {
    await session.call('type', { tty: 0, expect: 'bash', text: 'seq 1 200000' });
    let text = '';
    await expect
      .poll(async () => {
        const result = await session.call('wait', { timeout: 20 });
        text = textOf(result);
        expect(text.length).toBeLessThan(25_000);
        return /^200000$/m.test(text);
      }, { timeout: 120_000, interval: 0 })
      .toBe(true);
    expect(text).toMatch(/tty_0\/scrollback/);
  });

  it('answers malformed arguments to every tool with a clear isError and still serves', async () => {
    for (const tool of ['login', 'open', 'type', 'wait', 'close']) {
      for (const args of malformedArguments(tool, seededRandom(99 + tool.length))) {
        const result = await session.call(tool, args as Record<string, unknown>);
        expect(result.isError, `${tool} ${JSON.stringify(args).slice(0, 120)}`).toBe(true);
        expect(textOf(result)).toMatch(new RegExp(`^USAGE: ${tool}\\(\\) was not run, nothing happened: .+ Try `, 's'));
      }
    }
    // Valid calls the terminal layer refuses: each names the next step.
    expect(textOf(await session.call('close', { tty: 19 }))).toMatch(/TTY_NOT_FOUND: TTY 19 is not open.*open\(\)/);
    expect(textOf(await session.call('type', { tty: 0, expect: 'bash', text: 'x'.repeat(20_000) }))).toMatch(/TEXT_TOO_LONG/);
    const ok = await session.call('wait', { timeout: 0 });
    expect(ok.isError, textOf(ok)).toBeFalsy();
  });

  it('shuts down when stdin closes: the lock is released and the terminals live on for the next server', async () => {
    await session.call('type', { tty: 0, expect: 'bash', text: 'sleep 3; echo after-restart' });
    const pid = session.pid;
    await session.close();
    await expect.poll(() => isRunning(pid), { timeout: 20_000 }).toBe(false);
    await expect(stat(test.instance.paths.instanceLock)).rejects.toThrow();

    session = await connectStdio(test.dataDir);
    const login = await session.call('login');
    expect(login.structuredContent).toMatchObject({ adopted: [0, 1], opened: [], lost: [] });
    await waitFor(session.call, /after-restart/);
  });

  it('reports terminals lost to a container restart at the next login, and reopens the startup terminal', async () => {
    await session.close();
    await promisify(execFile)('docker', ['restart', '-t', '1', containerName(test.name)]);
    session = await connectStdio(test.dataDir);
    const login = await session.call('login');
    expect(login.isError, textOf(login)).toBeFalsy();
    const summary = login.structuredContent as { lost: Array<{ tty: number; scrollbackPrev: string }>; opened: Array<{ tty: number }> };
    expect(summary.lost.map((l) => l.tty)).toEqual([0, 1]);
    expect(summary.opened).toEqual([{ tty: 0, command: 'echo startup-ran; exec bash' }]);
    expect(textOf(login)).toMatch(/Lost in a container restart: TTY 0 .*scrollback\.prev/);
    expect(await readFile(hostView(test.instance.paths, summary.lost[1]?.scrollbackPrev ?? ''), 'utf8')).toContain('42');
  });

  it('the first call after the container restarts under a session says why, which terminals were lost and where their scrollback is', async () => {
    await session.call('wait', { timeout: 2 });
    await promisify(execFile)('docker', ['restart', '-t', '0', containerName(test.name)]);
    const first = await session.call('wait', { timeout: 2 });
    expect(first.isError, textOf(first)).toBeFalsy();
    expect(textOf(first)).toMatch(/^The terminals went away \(.+\): the container stopped or restarted, and they were started again\. TTY 0 \(echo startup-ran; exec bash\) was lost; its last scrollback is in \S+\/tmp\/sessions\/tty_0\/scrollback\.prev\. Open a new terminal with open\(\) where you need one\./);
    // Told once.
    expect(textOf(await session.call('wait', { timeout: 1 }))).not.toContain('went away');
  });

  it('logs to <state>/logs (stdout carries only MCP, or no call above would have worked)', async () => {
    const log = await readFile(`${test.instance.paths.logs}/server.log`, 'utf8');
    expect(log).toMatch(/"msg":"agent-kernel serve starting"/);
    expect(log).toMatch(/"msg":"terminals ready"/);
    expect(await readFile(`${test.instance.paths.logs}/server.log`, 'utf8')).toContain('shutting down');
  });
});
