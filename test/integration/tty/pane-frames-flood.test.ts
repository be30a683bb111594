import { afterAll, beforeAll, it } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { pollUntil } from '../../helpers/poll.js';
import type { TerminalHost } from '../../../src/tty/host/terminal-host.js';
import { type Terminals, startTerminals } from './helpers/terminals.js';
import { closeAll, openShell } from './helpers/suite-steps.js';

/**
 * With the panes' output read through their pipes (issue 36), control mode carries only commands:
 * a flood in one terminal must not hold up tmux's answers, and the brake the manager puts on while
 * its emulators are behind (throttle) must let go cleanly, however often it is pulled.
 */
describeWithEngine('pane pipes under a flood', () => {
  let t: Terminals;
  const host = (): TerminalHost => (t.manager as unknown as { ctx: { host: TerminalHost } }).ctx.host;
  /** tmux's answer to a listing of the terminals, or an error after `ms` (a hung client never answers). */
  const listWithin = async (ms: number): Promise<number> => {
    const began = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`tmux did not answer list-panes within ${ms} ms`)), ms)));
    try {
      await Promise.race([host().terminals(), late]);
    } finally {
      clearTimeout(timer);
    }
    return Date.now() - began;
  };

  beforeAll(async () => {
    process.env.AGENT_KERNEL_PANE_FRAMES = '1';
    t = await startTerminals('docker');
  });
  afterAll(async () => {
    delete process.env.AGENT_KERNEL_PANE_FRAMES;
    await t?.cleanup();
  });

  it('answers commands after the brake was pulled and let go 20 times during a flood (tmux 3.3a hung the control client)', { timeout: 300_000 }, async () => {
    const tty = await openShell(t);
    const throttle = host().throttle.bind(host());
    try {
      // About 27 MB: enough for every pull below, finite so that what tmux holds drains in time.
      await t.manager.type({ tty, expect: 'bash', text: 'seq 1 3500000' });
      let bytes = 0;
      const subscription = t.manager.events.onOutput((e) => {
        if (e.tty === tty) bytes += e.data.length;
      });
      try {
        await pollUntil(() => bytes > 1_000_000, 'the flood to arrive', { timeoutMs: 30_000 });
        for (let pull = 0; pull < 20; pull++) {
          throttle(true);
          // Let tmux queue the pane's output for the paused control client, then let go.
          const at = bytes;
          await pollUntil(() => bytes > at, 'a trickle through the brake', { timeoutMs: 10_000, intervalMs: 100 }).catch(() => undefined);
          throttle(false);
          const resumed = bytes;
          await pollUntil(() => bytes > resumed + 100_000, 'the flood again after the brake', { timeoutMs: 30_000 });
        }
      } finally {
        subscription.dispose();
      }
      await listWithin(60_000);
      // What tmux holds drains first (its pipe takes everything it read, at the readers' pace); idle: its end was reported.
      await pollUntil(async () => ['command-finished', 'idle'].includes((await t.manager.wait({ timeoutMs: 10_000 })).reason), 'the flood to end', { timeoutMs: 200_000, intervalMs: 0 });
    } finally {
      throttle(false);
      await closeAll(t);
    }
  });
});
