import { describe, expect, it } from 'vitest';
import { OutputBackpressure } from '../../../src/tty/output-backpressure.js';
import type { TerminalHost } from '../../../src/tty/host/terminal-host.js';
import type { Tty } from '../../../src/tty/terminal/tty.js';
import { TtyEmulator } from '../../../src/tty/screen/tty-emulator.js';

describe('OutputBackpressure', () => {
  it('stops the host reading while an emulator is 2 MB behind, once, and lets it read again when it has caught up', async () => {
    const emulator = new TtyEmulator({ cols: 80, rows: 24 });
    const calls: boolean[] = [];
    const host = { throttle: (paused: boolean) => calls.push(paused) } as unknown as TerminalHost;
    const backpressure = new OutputBackpressure(host, () => [{ emulator } as unknown as Tty]);
    const lines = (mb: number) => Buffer.from(`${'y'.repeat(79)}\r\n`.repeat(Math.round((mb * 1024 * 1024) / 81)));
    emulator.write(lines(1));
    backpressure.check();
    expect(calls).toEqual([]);
    emulator.write(lines(1.5));
    backpressure.check();
    backpressure.check();
    expect(calls).toEqual([true]);
    await expect.poll(() => calls, { timeout: 20_000 }).toEqual([true, false]);
    expect(emulator.backlog).toBeLessThanOrEqual(256 * 1024);
    backpressure.release();
    expect(calls).toEqual([true, false]);
    emulator.dispose();
  });
});
