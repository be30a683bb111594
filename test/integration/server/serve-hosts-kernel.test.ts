import { afterEach, beforeEach, expect, it } from 'vitest';
import { kernelHealth } from '../../../src/kernel/client/link.js';
import { kernelSocketPath } from '../../../src/kernel/socket-path.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { pollUntil } from '../../helpers/poll.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { type StdioSession, connectStdio, ensureBuilt, isRunning, textOf, waitFor } from './helpers.js';

/**
 * `serve` has two paths: reach the instance's kernel, or, with none running, host one in its own
 * process on the instance's socket and reach it there like any client. So a second client of an
 * instance without watch (a person's Claude Code while another runs, a tick beside a person)
 * shares the same terminals instead of being refused, and when the serve that hosts the kernel
 * ends, a serve still in use hosts it and its client goes on with the same terminals.
 */
describeWithEngine('serve with no kernel running', () => {
  let test: TestInstance;
  const sessions: StdioSession[] = [];

  beforeEach(async () => {
    await ensureBuilt();
    test = await createTestInstance({ config: { container: { network: 'none' } } });
  });
  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.close().catch(() => undefined);
    await test.cleanup();
  });

  const pidServing = async () => (await kernelHealth(kernelSocketPath(test.instance.paths.stateRoot)).catch(() => undefined))?.pid;

  it('hosts the kernel on the instance socket: a second serve shares its terminals, and hosts them when the first ends', { timeout: 300_000 }, async () => {
    const first = await connectStdio(test.dataDir);
    sessions.push(first);
    await first.ok('login');
    await first.ok('wait', { timeout: 5 });
    await first.ok('type', { tty: 0, expect: 'bash', text: 'echo from-the-first' });
    await waitFor(first.call, /from-the-first/);
    expect(await pidServing()).toBe(first.pid);

    const second = await connectStdio(test.dataDir);
    sessions.push(second);
    const login = await second.ok('login');
    expect(login.structuredContent).toMatchObject({ role: 'observer', terminals: [{ tty: 0 }] });
    expect(await pidServing()).toBe(first.pid);

    await first.close();
    await pollUntil(() => !isRunning(first.pid), 'the first serve to exit once its client left', { timeoutMs: 60_000 });
    await pollUntil(async () => (await pidServing()) === second.pid, 'the second serve to host the kernel', { timeoutMs: 120_000, intervalMs: 250 });

    // The same terminal, now the second's to drive: it logs in again on the kernel it hosts.
    let again = '';
    await pollUntil(
      async () => {
        const result = await second.call('login', { observe: false });
        again = textOf(result);
        return !result.isError;
      },
      'the second client to log in on the kernel its serve hosts',
      { timeoutMs: 60_000, intervalMs: 500 },
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; the last login said: ${again}`);
    });
    await second.ok('wait', { timeout: 5 });
    await second.ok('type', { tty: 0, expect: 'bash', text: 'echo from-the-second' });
    await waitFor(second.call, /from-the-second/);
  });
});
