import { afterAll, beforeAll, expect, it } from 'vitest';
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
