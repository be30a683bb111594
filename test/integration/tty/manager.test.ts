import { readFileSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostView } from '../../../src/config/paths.js';
import type { TerminalHost } from '../../../src/tty/terminal-host.js';
import { isKernelError } from '../../../src/errors.js';
import { TtyManager } from '../../../src/tty/tty-manager.js';
import { silentLogger } from '../../../src/log/logger.js';
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
    await t.manager.wait(20);
    expect(bytes).toContain('event-42');
    expect(seen).toContain(`opened ${tty}`);
    expect(seen).toContain(`started ${tty}`);
    expect(seen).toContain(`finished ${tty} 1`);
    expect(seen).toContain(`waiting ${tty} bash`);
    await t.manager.type({ tty, expect: 'bash', text: 'exit 3' });
    const ended = reportOf(await t.manager.wait(20), tty);
    expect(ended.alive).toBe(false);
    expect(seen).toContain(`died ${tty} 3`);
    expect(seen).toContain(`closed ${tty}`);

    for (const s of subscriptions) s.dispose();
    const count = seen.length;
    const again = await t.manager.open();
    await t.manager.wait(10);
    await t.manager.close(again.tty);
    expect(seen).toHaveLength(count);
  });

  it('stops reading while the emulators are behind: the program waits on its terminal, and nothing is lost', async () => {
    const { tty } = await t.manager.open();
    await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
    // The manager throttles its host when an emulator is 2 MB behind (output-backpressure.ts); here the test does.
    const host = (t.manager as unknown as { ctx: { host: TerminalHost } }).ctx.host;
    let bytes = 0;
    const subscription = t.manager.events.onOutput((e) => {
      if (e.tty === tty) bytes += e.data.length;
    });
    const seqPid = () => readdirSync('/proc').find((pid) => /^\d+$/.test(pid) && readFileSafe(`/proc/${pid}/cmdline`).startsWith('ak-flood-seq'));
    // What seq has written so far (it writes only to its terminal).
    const written = () => Number(/^wchar: (\d+)$/m.exec(readFileSafe(`/proc/${seqPid()}/io`))?.[1] ?? NaN);
    await t.manager.type({ tty, expect: 'bash', text: "bash -c 'exec -a ak-flood-seq seq 1 100000000'" });
    await expect.poll(() => written() > 100_000, { timeout: 10_000 }).toBe(true);
    host.throttle(true);
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const [before, wrote] = [bytes, written()];
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(bytes).toBe(before);
      // tmux stopped reading its pane too: seq waits on its terminal.
      expect(written()).toBe(wrote);
    } finally {
      host.throttle(false);
    }
    const resumed = bytes;
    await expect.poll(() => bytes > resumed + 500_000, { timeout: 10_000 }).toBe(true);
    subscription.dispose();
    await t.manager.type({ tty, expect: 'bash', text: 'C-c' });
    let done = await t.manager.wait(20);
    for (const until = Date.now() + 60_000; done.reason !== 'command-finished' && Date.now() < until; ) done = await t.manager.wait(20);
    expect(done.reason).toBe('command-finished');
    const scrollback = await readFile(hostView(t.test.instance.paths, reportOf(done, tty).files.scrollback), 'utf8');
    const numbers = scrollback.split('\n').filter((l) => /^\d+$/.test(l));
    // Every line in order, across the pause.
    expect(numbers[0]).toBe('1');
    expect(numbers.every((n, i) => Number(n) === i + 1)).toBe(true);
    await t.manager.close(tty);
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
    expect(reportOf(await lowered.wait(20), 5).text).toContain('still-42');
    const refused = await lowered.open({ tty: 6 }).catch((error: unknown) => error);
    expect(isKernelError(refused) && refused.code).toBe('TTY_OUT_OF_RANGE');
    const closed = await lowered.close(5);
    expect(closed.tty).toBe(5);
    expect(lowered.list()).toEqual([]);
  });
});

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'latin1');
  } catch {
    return '';
  }
}
