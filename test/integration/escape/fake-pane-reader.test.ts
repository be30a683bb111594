import { afterAll, beforeAll, expect, it } from 'vitest';
import { pollUntil } from '../../helpers/poll.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type Terminals, startTerminals, waitFor } from '../tty/helpers/terminals.js';
import { openShell } from '../tty/helpers/suite-steps.js';

/**
 * With the panes' output read through pipe frames (pane-reader.ts), the framers and the FIFO they
 * write to are in the container, where the agent is root: it can write any frame there. Each lie
 * breaks the terminals' stream with a reason (the terminals are then started again and read anew
 * from tmux), nothing it claims sizes a buffer of the kernel, and after the restart no line shows
 * twice unlabelled.
 */
describeWithEngine('escape: a forged pane reader in the container', () => {
  let t: Terminals;

  beforeAll(async () => {
    process.env.AGENT_KERNEL_PANE_FRAMES = '1';
    t = await startTerminals('docker');
  });
  afterAll(async () => {
    delete process.env.AGENT_KERNEL_PANE_FRAMES;
    await t?.cleanup();
  });

  /**
   * Write what `perl` prints into the terminals' FIFO from inside the container, as the agent can: it
   * finds the FIFO in /tmp and the pane's pipe number on its framer's command line. Not awaited: a
   * flood blocks once the kernel stops reading.
   */
  function forge(perl: string, pane: string): void {
    const script = [
      'f=$(ls /tmp/agent-kernel-frames-*-* | head -n 1)',
      `pipe=$(for c in /proc/[0-9]*/cmdline; do tr '\\000' ' ' < "$c" 2>/dev/null; echo; done | sed -n "s/^perl -e .* %$2 \\([0-9]*\\) *$/\\1/p" | tail -n 1)`,
      'exec perl -e "$1" "$2" "$pipe" > "$f"',
    ].join('; ');
    void t.sandbox.run(['sh', '-c', script, 'sh', perl, pane.slice(1)], { timeoutMs: 120_000 }).catch(() => {});
  }

  const header = (pane: string, offset: string, length: string) => `pack(q(NNQ>N), $ARGV[0] + ${pane}, $ARGV[1], ${offset}, ${length})`;

  it.each([
    ['a frame that claims 2 GB, then 200 MB of bytes', `print ${header('0', '0', '2147483647')}; print q(x) x 4096 for 1 .. 51200`, /a frame of 2147483647 bytes/],
    ['bytes again from offset 0', `print ${header('0', '0', '5')}, q(AGAIN)`, /bytes from offset 0 again/],
    ['bytes far past the next offset', `print ${header('0', '1000000000000', '4')}, q(JUMP)`, /skipping/],
    ['frames for a pane no terminal has', `print ${header('777', '0', '4')}, q(NONE)`, /which no terminal has/],
    ['200 MB of garbage', 'print q(garbage!) x 512 for 1 .. 51200', /the pane reader in the container sent/],
  ])('%s: the terminals are reported broken with the reason, memory stays bounded, and nothing shows twice after', { timeout: 240_000 }, async (_what, perl, reason) => {
    if (t.manager.disposed || t.manager.broken !== undefined) {
      await t.manager.dispose();
      await t.restart();
    }
    const tty = t.manager.list()[0]?.tty ?? (await openShell(t));
    const marker = `before-${Date.now()}`;
    await t.manager.type({ tty, expect: 'bash', text: `echo ${marker}` });
    await waitFor(t.manager, tty, (text) => text.split('\n').includes(marker));
    const pane = (t.manager as unknown as { ctx: { ttys: { get(n: number, max: number): { id: string } } } }).ctx.ttys.get(tty, 20).id;
    const rssBefore = process.memoryUsage().rss;
    forge(perl, pane);
    await pollUntil(() => t.manager.broken !== undefined, 'the terminals reported broken', { timeoutMs: 120_000 });
    expect(t.manager.broken).toMatch(reason);
    expect(t.manager.broken).toMatch(/started again/);
    // The lie never sized a buffer: 200 MB sent, far less held.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(150 * 1024 * 1024);
    await expect(t.manager.wait({ timeoutMs: 0 })).rejects.toThrow(/started again/);

    // The next server reads the panes anew (new pipes, a new FIFO): the terminal works, the line before shows once or not at all.
    await t.manager.dispose();
    await t.restart();
    const first = (await t.manager.wait({ timeoutMs: 2000 })).changed.find((r) => r.tty === tty);
    const after = `after-${Date.now()}`;
    await t.manager.type({ tty, expect: 'bash', text: `echo ${after}` });
    const text = `${first?.text ?? ''}\n${await waitFor(t.manager, tty, (seen) => seen.split('\n').includes(after), 60_000)}`;
    const repeats = text.split('\n').filter((line) => line === marker).length;
    expect(repeats === 0 || /possibly repeated/i.test(text)).toBe(true);
  });
});
