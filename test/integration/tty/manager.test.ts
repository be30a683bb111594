import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCodedError } from '../../../src/errors.js';
import { TtyManager } from '../../../src/tty/tty-manager.js';
import { silentLogger } from '../../../src/log/logger.js';
import { formatTtyTable, readTtyStatuses } from '../../../src/observe/tty-status.js';
import { pollUntil } from '../../helpers/poll.js';
import { type Terminals, reportOf, startTerminals, waitFor } from './helpers/terminals.js';

// The manager's surface beyond the five tools, on the host backend (tmux on this machine).
describe('terminal manager', () => {
  let t: Terminals;
  beforeAll(async () => {
    t = await startTerminals('host');
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('tells subscribers about opening, output, commands with exit codes, waiting for input, death and closing', async () => {
    const seen: string[] = [];
    let bytes = '';
    const subscriptions = [
      t.manager.events.onOpened((e) => seen.push(`opened ${e.tty}`)),
      t.manager.events.onOutput((e) => {
        bytes += e.data.toString();
      }),
      t.manager.events.onCommandStarted((e) => seen.push(`started ${e.tty}`)),
      t.manager.events.onCommandFinished((e) => seen.push(`finished ${e.tty} ${e.exitCode}`)),
      t.manager.events.onWaitingForInput((e) => seen.push(`waiting ${e.tty} ${e.program}`)),
      t.manager.events.onDied((e) => seen.push(`died ${e.tty} ${e.exitCode}`)),
      t.manager.events.onClosed((e) => seen.push(`closed ${e.tty}`)),
    ];
    const { tty } = await t.manager.open();
    await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
    await t.manager.type({ tty, expect: 'bash', text: 'echo event-$((6*7)); false' });
    await t.manager.wait({ timeoutMs: 20_000 });
    expect(bytes).toContain('event-42');
    expect(seen).toContain(`opened ${tty}`);
    expect(seen).toContain(`started ${tty}`);
    expect(seen).toContain(`finished ${tty} 1`);
    expect(seen).toContain(`waiting ${tty} bash`);
    await t.manager.type({ tty, expect: 'bash', text: 'exit 3' });
    const ended = reportOf(await t.manager.wait({ timeoutMs: 20_000 }), tty);
    expect(ended.alive).toBe(false);
    expect(seen).toContain(`died ${tty} 3`);
    expect(seen).toContain(`closed ${tty}`);

    for (const s of subscriptions) s.dispose();
    const count = seen.length;
    const again = await t.manager.open();
    await t.manager.wait({ timeoutMs: 10_000 });
    await t.manager.close(again.tty);
    expect(seen).toHaveLength(count);
  });

  it('keeps terminals adopted above a lowered tty.max_ttys usable: waitable, typeable, closable', async () => {
    const { tty } = await t.manager.open({ tty: 5 });
    await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
    await t.manager.dispose();
    const instance = { ...t.test.instance, config: { ...t.test.instance.config, tty: { ...t.test.instance.config.tty, max_ttys: 2 } } };
    const lowered = await TtyManager.start({ instance, sandbox: t.sandbox, logger: silentLogger() });
    t.manager = lowered;
    expect(lowered.adoptReport.adopted).toEqual([5]);
    await lowered.type({ tty: 5, expect: 'bash', text: 'echo still-$((40+2))' });
    expect(reportOf(await lowered.wait({ timeoutMs: 20_000 }), 5).text).toContain('still-42');
    const refused = await lowered.open({ tty: 6 }).catch((error: unknown) => error);
    expect(isCodedError(refused) && refused.code).toBe('TTY_OUT_OF_RANGE');
    const closed = await lowered.close(5);
    expect(closed.tty).toBe(5);
    expect(lowered.list()).toEqual([]);
  });
});

// `agent-kernel ls` reads each terminal's status file: between ticks nobody calls wait, so it must follow the shell itself.
describe('terminal status files (agent-kernel ls)', () => {
  let t: Terminals;
  beforeAll(async () => {
    t = await startTerminals('host');
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('say a finished command is finished, with no wait after it: the shell in the foreground, idle, nothing unseen once seen', async () => {
    const { tty } = await t.manager.open();
    await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
    await t.manager.type({ tty, expect: 'bash', text: 'sleep 3' });
    const row = async () => (await readTtyStatuses(t.test.instance.paths.sessions)).find((r) => r.tty === tty);
    // The last wait before the tick ended saw sleep running.
    await t.manager.wait({ timeoutMs: 1000 });
    await pollUntil(async () => (await row())?.program === 'sleep', 'ls to show sleep', { timeoutMs: 5000, intervalMs: 100 });
    expect((await row())?.state).toBe('running');
    await pollUntil(async () => {
      const now = await row();
      return now?.program === 'bash' && now.state === 'idle';
    }, 'ls to show the shell idle at its prompt after sleep ended', { timeoutMs: 20_000, intervalMs: 200 }).catch(async (error: unknown) => {
      throw new Error(`${(error as Error).message}: ${formatTtyTable([(await row())!])}`);
    });
    await t.manager.wait({ timeoutMs: 5000 });
    await pollUntil(async () => (await row())?.unseen === false, 'ls to show nothing unseen after a wait', { timeoutMs: 10_000, intervalMs: 200 });
  });
});
