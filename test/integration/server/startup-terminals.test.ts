import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { connectStdio, ensureBuilt, type StdioSession, textOf, waitFor } from './helpers.js';

describeWithEngine('login opens the terminals of startup.json (real container)', () => {
  let test: TestInstance;
  let session: StdioSession;

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance({
      files: { 'system/startup.json': JSON.stringify({ terminals: [{ tty: 3, cwd: '/tmp' }] }) },
    });
    session = await connectStdio(test.dataDir);
  });
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await test?.cleanup();
  });

  it('opens TTY 3 in /tmp at login', async () => {
    const login = await session.call('login');
    expect(login.isError, textOf(login)).toBeFalsy();
    expect(login.structuredContent).toMatchObject({ opened: [{ tty: 3, command: 'bash' }], startupErrors: [], capacity: { used: 1 } });
    await waitFor(session.call, /TTY 3/);
    const typed = await session.call('type', { tty: 3, expect: 'bash', text: 'pwd' });
    expect(typed.isError, textOf(typed)).toBeFalsy();
    expect(await waitFor(session.call, /^\/tmp$/m)).toMatch(/^\/tmp$/m);
    // The next open() takes the lowest free number, 0.
    expect((await session.call('open')).structuredContent).toMatchObject({ tty: 0 });
  });
});

describe('login on the host backend without tmux (PTYs of the server)', () => {
  let test: TestInstance;

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance({
      config: { container: { backend: 'host' } },
      containerfile: false,
      files: { 'system/startup.json': JSON.stringify({ terminals: [{ tty: 3, cwd: '/tmp' }] }) },
    });
  });
  afterAll(async () => {
    await test?.cleanup();
  });

  it('says the terminals are not persistent, and the next server reports them ended', async () => {
    // AGENT_KERNEL_HOST_TMUX=0 stands in for a machine without tmux.
    const env = { AGENT_KERNEL_HOST_TMUX: '0' };
    const first = await connectStdio(test.dataDir, env);
    try {
      const login = await first.call('login');
      expect(login.structuredContent).toMatchObject({ persistent: false, opened: [{ tty: 3 }] });
      expect(textOf(login)).toContain('These terminals are not persistent: they end when this server stops.');
      await waitFor(first.call, /TTY 3/);
      await first.call('type', { tty: 3, expect: 'bash', text: 'echo pty-$((6*7)); pwd' });
      expect(await waitFor(first.call, /^\/tmp$/m)).toMatch(/^pty-42$/m);
    } finally {
      await first.close();
    }
    const second = await connectStdio(test.dataDir, env);
    try {
      const login = await second.call('login');
      expect(login.structuredContent).toMatchObject({ persistent: false, adopted: [], lost: [{ tty: 3 }], opened: [{ tty: 3 }] });
      expect(textOf(login)).toMatch(/Ended with the previous server: TTY 3 \(bash\)/);
      // Let the new shell finish starting (its rc files) before this server ends it.
      await waitFor(second.call, /[#$] ?$/m);
    } finally {
      await second.close();
    }
  });
});
