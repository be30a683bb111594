import { describe, expect, it } from 'vitest';
import { UnseenTracker } from '../../../../src/tty/seen/unseen-tracker.js';
import { TtyEmulator } from '../../../../src/tty/screen/tty-emulator.js';

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

  it('top: its cursor sits above the process list; any row it redraws, header or list, makes the screen the news', async () => {
    const { tracker, emu, feed } = await setup();
    // Header, an empty message row with the cursor on it, then the list below (top's layout).
    const frame = (load: string, tasks: string, pid: string) => `\x1b[H\x1b[2Jtop ${load}\r\n${tasks}\r\n\r\n${pid}\r\n${pid}1\x1b[3;1H`;
    await feed(frame('1.0', 'Tasks: 9', '42'));
    tracker.markSeen(emu);
    expect(emu.cursorAbs - emu.totalScrolls).toBe(2);
    expect(tracker.changeKind(emu)).toBe('none');
    // The same frame again: nothing new.
    await feed(`\x1b[Htop 1.0\x1b[K\x1b[3;1H`);
    expect(tracker.hasUnseen(emu)).toBe(false);
    // H: only the header above the cursor reads differently.
    await feed(`\x1b[2;1HThreads: 12\x1b[K\x1b[3;1H`);
    expect(tracker.changeKind(emu)).toBe('screen');
    tracker.markSeen(emu);
    // A row of the list below the cursor changes.
    await feed(`\x1b[4;1H43\x1b[K\x1b[3;1H`);
    expect(tracker.changeKind(emu)).toBe('screen');
    expect(tracker.onlyMarkRowChanged(emu)).toBe(false);
  });

  it('a line-oriented terminal: new rows and scrolled rows are lines, and only the cursor row rewritten is told apart', async () => {
    const { tracker, emu, feed } = await setup();
    await feed('$ ');
    tracker.markSeen(emu);
    await feed('\r 10%');
    expect(tracker.changeKind(emu)).toBe('lines');
    expect(tracker.onlyMarkRowChanged(emu)).toBe(true);
    await feed('\r\ndone\r\n');
    expect(tracker.onlyMarkRowChanged(emu)).toBe(false);
    tracker.markSeen(emu);
    // Enough lines to scroll: rows move, so nothing is a redraw in place.
    await feed('a\r\nb\r\nc\r\nd\r\ne\r\nf\r\n');
    expect(tracker.changeKind(emu)).toBe('lines');
    expect(tracker.collect(emu).all).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('remembers the cursor row up to the cursor, after which typed text is echoed', async () => {
    const { tracker, emu, feed } = await setup();
    await feed('root@h:/# ');
    tracker.markSeen(emu);
    expect(tracker.markPrefix).toBe('root@h:/# ');
  });
});
