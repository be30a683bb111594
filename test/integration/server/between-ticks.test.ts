import { readdir, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { formatRecordingList } from '../../../src/cli/commands/agent-kernel/play.js';
import { readEvents } from '../../../src/observe/events/event-log.js';
import { listRecordings } from '../../../src/web/web-data.js';
import { pollUntil } from '../../helpers/poll.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { connectStdio, ensureBuilt, type StdioSession, textOf, waitFor } from './helpers.js';

/**
 * Work over MCP while no tick runs (tick 2 ended, none started since) is filed as between
 * ticks, not under tick 2: its recording is `tty_N-between-002.cast`, its events carry no tick,
 * and the web view's list and `agent-kernel play --list` still show the recording.
 */
describeWithEngine('work between ticks, over MCP', () => {
  let test: TestInstance;
  let session: StdioSession;

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance();
    await writeFile(test.instance.paths.state, JSON.stringify({ tick: 2 }));
    session = await connectStdio(test.dataDir);
  });
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await test?.cleanup();
  });

  it('names its recording and stamps its events as between ticks, and every list still shows it', async () => {
    const login = await session.call('login');
    expect(textOf(login)).toContain('between ticks (no tick runs; the last was tick 2)');
    const opened = await session.call('open');
    const tty = (opened.structuredContent as { tty: number }).tty;
    await session.call('wait', { timeout: 5 });
    await session.call('type', { tty, expect: 'bash', text: 'echo between-$((1+1))' });
    await waitFor(session.call, /^between-2$/m);

    const events = async () => (await readEvents(test.instance.paths.events)).events.filter((e) => e.type === 'command.finished');
    await pollUntil(async () => (await events()).length > 0, 'the command.finished event', { timeoutMs: 10_000 });
    for (const event of await events()) {
      expect(event).not.toHaveProperty('tick');
      expect(String((event as { recording?: string }).recording)).toContain(`tty_${tty}-between-002.cast`);
    }
    const names = await readdir(test.instance.paths.recordings);
    expect(names).toContain(`tty_${tty}-between-002.cast`);
    expect(names.filter((n) => n.includes('-tick-002'))).toEqual([]);

    await session.close();
    const listed = await listRecordings(test.instance);
    expect(listed.find((r) => r.file === `tty_${tty}-between-002.cast`)).toMatchObject({ tty, tick: 2, between: true });
    expect(formatRecordingList(listed)).toMatch(new RegExp(`^tty_${tty}-between-002\\.cast\\s.*echo between`, 'm'));
  });
});
