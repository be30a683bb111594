import { describe, expect, it } from 'vitest';
import { UnseenTracker } from '../../../../src/tty/seen/unseen-tracker.js';
import type { Row } from '../../../../src/observe/screen-source.js';
import { EMULATOR_SCROLLBACK, type ShellMark, TtyEmulator } from '../../../../src/tty/screen/tty-emulator.js';
import { pollUntil } from '../../../helpers/poll.js';

function emulator(cols = 20, rows = 5) {
  const left: Row[] = [];
  const marks: ShellMark[] = [];
  const tracker = new UnseenTracker(0, 0);
  const emu = new TtyEmulator({
    cols,
    rows,
    onRowsLeaving: (r) => {
      left.push(...r);
      tracker.onRowsLeaving(r);
    },
    onMark: (m) => marks.push(m),
  });
  return { emu, left, marks, tracker };
}

async function feed(emu: TtyEmulator, text: string): Promise<void> {
  emu.write(Buffer.from(text));
  await emu.drain();
}

describe('TtyEmulator', () => {
  it('numbers rows across scrolling and hands every row that leaves over exactly once, in order', async () => {
    const { emu, left } = emulator();
    const n = EMULATOR_SCROLLBACK * 3;
    await feed(emu, Array.from({ length: n }, (_, i) => `r${i}`).join('\r\n'));
    emu.flushRowsAbove();
    expect(emu.totalScrolls).toBe(n - 5);
    expect(left.map((r) => r.text)).toEqual(Array.from({ length: n - 5 }, (_, i) => `r${i}`));
    expect(left.map((r) => r.abs)).toEqual(Array.from({ length: n - 5 }, (_, i) => i));
    expect(emu.cursorAbs).toBe(n - 1);
  });

  it('keeps wrapped rows marked as continuations, trailing spaces included', async () => {
    const { emu } = emulator(10, 5);
    await feed(emu, 'abcdefgh  xyz\r\nnext');
    const rows = emu.readRows(0, 3);
    expect(rows).toEqual([
      { abs: 0, text: 'abcdefgh  ', wrapped: false },
      { abs: 1, text: 'xyz', wrapped: true },
      { abs: 2, text: 'next', wrapped: false },
    ]);
  });

  it('sees OSC 133 marks with exit codes, invisibly', async () => {
    const { emu, marks } = emulator();
    await feed(emu, '\x1b]133;C\x07out\r\n\x1b]133;D;130\x07\x1b]133;A\x07$ \x1b]133;B\x07');
    expect(marks.map((m) => [m.kind, m.exitCode])).toEqual([
      ['C', undefined],
      ['D', 130],
      ['A', undefined],
      ['B', undefined],
    ]);
    expect(emu.screenText()).toBe('out\n$ ');
    await feed(emu, '\x1b]133;C;ak=f00d\x07\x1b]133;D;2;ak=f00d\x07\x1b]133;B;ak=\x07');
    expect(marks.slice(4).map((m) => [m.kind, m.exitCode, m.key])).toEqual([
      ['C', undefined, 'f00d'],
      ['D', 2, 'f00d'],
      ['B', undefined, undefined],
    ]);
  });

  it('knows the alternate screen and bracketed paste mode', async () => {
    const { emu } = emulator();
    await feed(emu, '\x1b[?2004h\x1b[?1049hfull screen');
    expect(emu.alternateScreen).toBe(true);
    expect(emu.bracketedPaste).toBe(true);
    expect(emu.screenText()).toBe('full screen');
    await feed(emu, '\x1b[?1049l');
    expect(emu.alternateScreen).toBe(false);
  });

  it('does not count scrolls of the alternate screen as history', async () => {
    const { emu } = emulator();
    await feed(emu, '\x1b[?1049h' + 'x\r\n'.repeat(50) + '\x1b[?1049l');
    expect(emu.totalScrolls).toBe(0);
  });

  it('drains what was written before, even while output keeps coming faster than it parses', async () => {
    const { emu } = emulator(80, 24);
    const chunk = `${'x'.repeat(79)}\r\n`.repeat(800);
    let writing = true;
    const feed = () => {
      if (!writing) return;
      emu.write(Buffer.from(chunk));
      setImmediate(feed);
    };
    feed();
    await pollUntil(() => emu.backlog > 0, 'a backlog behind the writer', { timeoutMs: 5000, intervalMs: 5 });
    const written = emu.bytesWritten;
    const backlog = emu.backlog;
    expect(backlog).toBeGreaterThan(0);
    // It waited for every byte, including those written after it was called: with a writer this fast, forever.
    const drained = await Promise.race([emu.drain().then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 5000))]);
    writing = false;
    expect(drained).toBe(true);
    expect(emu.bytesWritten).toBeGreaterThan(written);
    await emu.drain();
    expect(emu.backlog).toBe(0);
  });

  it('hands rows over before ED3 (clear) erases the scrollback', async () => {
    const { emu, left } = emulator();
    await feed(emu, 'a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\n\x1b[H\x1b[2J\x1b[3J');
    expect(left.map((r) => r.text).slice(0, 3)).toEqual(['a', 'b', 'c']);
  });
});

describe('UnseenTracker', () => {
  it('counts and keeps the head of output that left the emulator before the agent looked', async () => {
    const { emu, tracker } = emulator(20, 5);
    tracker.markSeen(emu);
    await feed(emu, Array.from({ length: 5000 }, (_, i) => `n${i + 1}`).join('\r\n'));
    emu.flushRowsAbove();
    expect(tracker.hasUnseen(emu)).toBe(true);
    const out = tracker.collect(emu);
    expect(out.total).toBe(5000);
    expect(out.head.slice(0, 3)).toEqual(['n1', 'n2', 'n3']);
    expect(out.tail.slice(-2)).toEqual(['n4999', 'n5000']);
    tracker.markSeen(emu);
    expect(tracker.hasUnseen(emu)).toBe(false);
  });

  it('joins wrapped rows into one line', async () => {
    const { emu, tracker } = emulator(10, 5);
    tracker.markSeen(emu);
    await feed(emu, `${'x'.repeat(25)}\r\ny`);
    expect(tracker.collect(emu)).toMatchObject({ head: ['x'.repeat(25), 'y'], total: 2 });
  });

  it('ignores invisible output (mode switches) but not a changed mark row', async () => {
    const { emu, tracker } = emulator();
    await feed(emu, '$ ');
    tracker.markSeen(emu);
    await feed(emu, '\x1b[?2004h');
    expect(tracker.hasUnseen(emu)).toBe(false);
    await feed(emu, 'ls');
    expect(tracker.hasUnseen(emu)).toBe(true);
    expect(tracker.collect(emu)).toMatchObject({ head: ['$ ls'], total: 1 });
  });
});
