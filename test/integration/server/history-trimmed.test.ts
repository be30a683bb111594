import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { connectStdio, ensureBuilt, type StdioSession, textOf } from './helpers.js';

const GONE = /^… (at least )?([\d,]+) lines? printed while no server was attached (?:is|are) gone: tmux keeps the last 1,000 \(tty\.history_limit\)/m;

// More lines than tty.history_limit printed while no server is attached: the next wait says
// exactly how many are gone, and shows what tmux kept from the very next line on.
describeWithEngine('history trimmed while no server was attached (real container, real tmux)', () => {
  let test: TestInstance;
  let sandbox: Sandbox;
  let session: StdioSession | undefined;

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance({ config: { tty: { history_limit: 1000 } } });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
  });
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await test?.cleanup();
  });

  const inContainer = async (file: string) => (await sandbox.run(['test', '-e', file])).exitCode === 0;

  it('says exactly how many lines are gone, and the next line shown is the first one kept', async () => {
    session = await connectStdio(test.dataDir);
    expect((await session.call('login')).isError, session.stderr()).toBeFalsy();
    await session.call('wait', { timeout: 10 });
    // 900 lines reach this server (the agent does not look); 400 more come once it is gone, past the 1,000 tmux keeps.
    // (A script, so that the command line fits on one row: the count is of rows, and a longer line would take two.)
    const script = 'seq -f G-%g 1 900; touch /tmp/g-done; while [ ! -e /tmp/go-on ]; do sleep 0.1; done; seq -f H-%g 1 400; touch /tmp/h-done';
    await sandbox.run(['sh', '-c', `printf '%s\\n' '${script}' > /tmp/trim.sh`]);
    await session.call('type', { tty: 0, expect: 'bash', text: 'bash /tmp/trim.sh' });
    await expect.poll(() => inContainer('/tmp/g-done'), { timeout: 60_000 }).toBe(true);
    // Let this server take in what was printed (its screen file shows the last line), then stop it.
    await expect.poll(() => readFile(path.join(test.instance.paths.tty(0), 'screen'), 'utf8').then((t) => t.includes('G-900'), () => false), { timeout: 60_000 }).toBe(true);
    await session.close();
    session = undefined;
    await sandbox.run(['touch', '/tmp/go-on']);
    await expect.poll(() => inContainer('/tmp/h-done'), { timeout: 60_000 }).toBe(true);

    session = await connectStdio(test.dataDir);
    expect((await session.call('login')).isError).toBeFalsy();
    const shown = textOf(await session.call('wait', { timeout: 10 }));
    const gone = GONE.exec(shown);
    expect(gone, shown).not.toBeNull();
    expect(gone?.[1], 'an exact count').toBeUndefined();
    const count = Number(gone?.[2]?.replace(/,/g, ''));
    // Gone: the prompt row the command was typed on, then G-1 up to G-(count - 1).
    expect(count).toBeGreaterThan(1);
    expect(/^G-(\d+)$/m.exec(shown)?.[1], shown).toBe(String(count));
    expect(shown).toMatch(/^H-400$/m);
  }, 240_000);
});
