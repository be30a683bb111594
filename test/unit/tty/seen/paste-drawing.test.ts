import { describe, expect, it } from 'vitest';
import { promptOnly } from '../../../../src/observe/echo-filter.js';
import { TtyEmulator } from '../../../../src/tty/screen/tty-emulator.js';
import { UnseenTracker } from '../../../../src/tty/seen/unseen-tracker.js';

const COLS = 120;
const ROWS = 40;

/** A small seeded generator, so that a failing split can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * What bash 5.2's readline writes for a bracketed paste of `lines` after `prompt`, as recorded
 * from a real bash at 120x40: the first rows one by one, the rest written over the last row with
 * `\r` (highlighted), then the last screenful written over that row again, then the Enter.
 */
function drawPaste(prompt: string, lines: readonly string[]): string {
  let out = `\x1b[?2004h${prompt}\x1b[7m${lines[0]}`;
  for (const [i, line] of lines.entries()) {
    if (i === 0) continue;
    out += i < ROWS - 1 ? `\r\n\r${line}` : `\x1b[27m\r\x1b[7m${line}`;
  }
  out += '\x1b[27m';
  if (lines.length >= ROWS) for (const line of lines.slice(-ROWS)) out += `\r${line}`;
  // Readline leaves the line; the shell reads the next part of the heredoc at `> ` (a blank drawn before it at times).
  return `${out}\r\n\x1b[?2004l\r`;
}

/** A heredoc of 2,000 lines in 10 parts as 10 type() calls: the lines of each call and what the shell draws for it. */
function heredocInParts(rand: () => number): Array<{ typed: string[]; drawn: string }> {
  const word = () => Array.from({ length: 50 }, () => String.fromCharCode(97 + Math.floor(rand() * 26))).join('');
  const body = Array.from({ length: 2000 }, (_, i) => `row ${String(i + 1).padStart(4, '0')} ${word()}`);
  const calls: Array<{ typed: string[]; drawn: string }> = [];
  for (let k = 0; k < 10; k++) {
    const part = body.slice(k * 200, (k + 1) * 200);
    const typed = k === 0 ? ["cat > /tmp/big.txt <<'C27EOF'", ...part] : part;
    calls.push({ typed, drawn: drawPaste(k === 0 ? 'root@c:/# ' : rand() < 0.5 ? ' > ' : '> ', typed) });
  }
  calls.push({ typed: ['C27EOF'], drawn: `${drawPaste('> ', ['C27EOF'])}\x1b[?2004hroot@c:/# ` });
  return calls;
}

async function setup() {
  let typed: string[] = [];
  const tracker = new UnseenTracker(0, 0, () => typed);
  const emu = new TtyEmulator({ cols: COLS, rows: ROWS, onRowsLeaving: (rows) => tracker.onRowsLeaving(rows), onMark: () => {} });
  emu.write('root@c:/# ');
  await emu.drain();
  tracker.markSeen(emu);
  return { tracker, emu, type: (lines: readonly string[]) => (typed = [...typed, ...lines]), looked: () => (typed = []) };
}

/** Lines of new output that are neither echo nor a prompt asking for the next line. */
function output(tracker: UnseenTracker, emu: TtyEmulator): string[] {
  const collected = tracker.collect(emu);
  return [...(collected.all ?? collected.head)].filter((line) => !promptOnly(line) && line.trim() !== 'root@c:/#');
}

describe('a heredoc pasted in parts, judged while the shell is still drawing it (issue 38)', () => {
  it('at any byte of the drawing, its echo is not output: not a half-drawn row, not two lines laid over each other', async () => {
    for (const seed of [1, 2, 3]) {
      const rand = random(seed);
      const { tracker, emu, type } = await setup();
      for (const call of heredocInParts(rand)) {
        type(call.typed);
        for (let at = 0; at < call.drawn.length; ) {
          const size = 1 + Math.floor(rand() * 300);
          emu.write(call.drawn.slice(at, at + size));
          at += size;
          await emu.drain();
          expect(output(tracker, emu), `seed ${seed}, after byte ${at} of the drawing of ${call.typed[0]}`).toEqual([]);
        }
        expect(tracker.echoProgress(emu).complete).toBe(true);
      }
    }
  }, 120_000);

  it('says the echo is not complete while a part is still being drawn, and complete once it is', async () => {
    const rand = random(7);
    const { tracker, emu, type } = await setup();
    const [first] = heredocInParts(rand);
    type(first!.typed);
    const half = first!.drawn.indexOf('row 0120');
    emu.write(first!.drawn.slice(0, half));
    await emu.drain();
    expect(tracker.echoProgress(emu)).toEqual({ complete: false, answered: false });
    emu.write(first!.drawn.slice(half));
    emu.write('> ');
    await emu.drain();
    expect(tracker.echoProgress(emu)).toEqual({ complete: true, answered: true });
  });

  it('a look in the middle of the drawing: the rest of the echo does not come back as output after it', async () => {
    for (const seed of [11, 12, 13, 14]) {
      const rand = random(seed);
      const { tracker, emu, type, looked } = await setup();
      const calls = heredocInParts(rand).slice(0, 3);
      for (const call of calls) {
        type(call.typed);
        const cut = Math.floor(rand() * call.drawn.length);
        emu.write(call.drawn.slice(0, cut));
        await emu.drain();
        // A wait returns here: the agent is shown what is there, and what it typed is forgotten.
        tracker.markSeen(emu);
        looked();
        emu.write(call.drawn.slice(cut));
        await emu.drain();
        expect(output(tracker, emu), `seed ${seed}, a look at byte ${cut} of ${call.drawn.length}`).toEqual([]);
      }
      // What the program prints after the echo is still news.
      emu.write('\r\nreal output\r\n');
      await emu.drain();
      expect(output(tracker, emu)).toEqual(['real output']);
    }
  }, 120_000);
});
