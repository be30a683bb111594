import { describe, expect, it } from 'vitest';
import { UnseenTracker } from '../../../src/observe/unseen-tracker.js';
import { TtyEmulator } from '../../../src/tty/tty-emulator.js';

async function setup() {
  const tracker = new UnseenTracker(0, 0);
  const emu = new TtyEmulator({ cols: 30, rows: 5, onRowsLeaving: (r) => tracker.onRowsLeaving(r), onMark: () => {} });
  const feed = async (text: string) => {
    emu.write(Buffer.from(text));
    await emu.drain();
  };
  return { tracker, emu, feed };
}

describe('UnseenTracker: a program that redraws the normal screen in place (top)', () => {
  it('rows above the cursor rewritten without new rows are news, shown as the screen', async () => {
    const { tracker, emu, feed } = await setup();
    await feed('load 1.0\r\ntasks 9\r\n\r\n\r\n');
    tracker.markSeen(emu);
    expect(tracker.hasUnseen(emu)).toBe(false);
    await feed('\x1b[Hload 2.0\x1b[K\r\ntasks 10\x1b[K\x1b[5;1H');
    expect(tracker.hasUnseen(emu)).toBe(true);
    expect(tracker.redrawnInPlace(emu)).toBe(true);
    tracker.markSeen(emu);
    expect(tracker.hasUnseen(emu)).toBe(false);
    // The same bytes again change nothing on the screen: nothing new.
    await feed('\x1b[Hload 2.0\x1b[K\x1b[5;1H');
    expect(tracker.hasUnseen(emu)).toBe(false);
  });

  it('a new prompt or a progress line on the cursor row is new output, not a redraw', async () => {
    const { tracker, emu, feed } = await setup();
    tracker.markSeen(emu);
    await feed('$ ');
    expect(tracker.hasUnseen(emu)).toBe(true);
    expect(tracker.redrawnInPlace(emu)).toBe(false);
    tracker.markSeen(emu);
    await feed('\r 50%\r 60%');
    expect(tracker.hasUnseen(emu)).toBe(true);
    expect(tracker.redrawnInPlace(emu)).toBe(false);
  });
});
