import { describe, expect, it } from 'vitest';
import { MAX_LINE_CHARS, renderNewOutput, renderScreen } from '../../../src/observe/render-new-output.js';

const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);

describe('renderNewOutput', () => {
  it('shows up to 20 lines whole', () => {
    const out = renderNewOutput({ head: lines(1, 20), tail: lines(11, 20), total: 20 }, () => 'FILE');
    expect(out).toEqual({ text: lines(1, 20).join('\n'), totalLines: 20, elidedLines: 0 });
  });

  it('joins head and tail without repeating lines when the output is short', () => {
    const out = renderNewOutput({ head: lines(1, 3), tail: lines(1, 3), total: 3 }, () => 'FILE');
    expect(out.text).toBe(lines(1, 3).join('\n'));
  });

  it('completes a short head (lines kept before they scrolled away) with the tail', () => {
    const out = renderNewOutput({ head: lines(1, 5), tail: lines(1, 12), total: 12 }, () => 'FILE');
    expect(out.text.split('\n')).toEqual(lines(1, 12));
  });

  it.each([
    [21, 1],
    [1000, 980],
    [1_000_002, 999_982],
  ])('elides %i lines to head and tail, saying %i were left out and where', (total, elided) => {
    let asked: number[] = [];
    const out = renderNewOutput({ head: lines(1, 20), tail: lines(total - 9, total), total }, (first, last) => {
      asked = [first, last];
      return `they are lines ${first + 1}-${last + 1} of tmp/sessions/tty_0/scrollback`;
    });
    // Exactly the lines between the head and the tail (0-based).
    expect(asked).toEqual([10, total - 11]);
    const shown = out.text.split('\n');
    expect(shown).toHaveLength(21);
    expect(shown.slice(0, 10)).toEqual(lines(1, 10));
    expect(shown.slice(11)).toEqual(lines(total - 9, total));
    expect(shown[10]).toContain(`${elided} more line${elided === 1 ? '' : 's'} left out`);
    expect(shown[10]).toContain('tmp/sessions/tty_0/scrollback');
    expect(out).toMatchObject({ totalLines: total, elidedLines: elided });
  });

  it('elides only where it saves bytes: lines no longer than the note that would stand for them are shown', () => {
    const where = () => 'they are lines 11-13 of /data/tmp/sessions/tty_0/scrollback; read some with `sed -n 11,13p /data/tmp/sessions/tty_0/scrollback`';
    // 23 short lines: the 3 in the middle are far shorter than the note (the 332 B to hide 3 lines).
    const short = renderNewOutput({ head: lines(1, 20), tail: lines(14, 23), total: 23, all: lines(1, 23) }, where);
    expect(short).toEqual({ text: lines(1, 23).join('\n'), totalLines: 23, elidedLines: 0 });
    // The same count of long lines: the note is shorter than they are.
    const long = Array.from({ length: 23 }, (_, i) => `${i + 1} ${'x'.repeat(200)}`);
    const elided = renderNewOutput({ head: long.slice(0, 20), tail: long.slice(13), total: 23, all: long }, where);
    expect(elided.elidedLines).toBe(3);
    expect(elided.text.length).toBeLessThan(long.join('\n').length);
    // Lines no longer all known (some left the emulator): elided as before.
    expect(renderNewOutput({ head: lines(1, 20), tail: lines(14, 23), total: 23 }, where).elidedLines).toBe(3);
  });

  it('cuts a very long line and says by how much', () => {
    const out = renderNewOutput({ head: ['x'.repeat(MAX_LINE_CHARS + 5)], tail: [], total: 1 }, () => 'FILE');
    expect(out.text).toBe(`${'x'.repeat(MAX_LINE_CHARS)}… (5 more characters)`);
  });

  it('shows nothing for no lines', () => {
    expect(renderNewOutput({ head: [], tail: [], total: 0 }, () => 'FILE')).toEqual({ text: '', totalLines: 0, elidedLines: 0 });
  });
});

describe('renderScreen', () => {
  it.each([
    ['rows painted with spaces lose them at the end', `~${' '.repeat(119)}\n~${' '.repeat(119)}\n"notes.txt" 0L, 0B   `, '~\n~\n"notes.txt" 0L, 0B'],
    ['spaces inside a row stay', 'a   b  \n  indented', 'a   b\n  indented'],
    ['blank rows between text stay (as empty rows)', `top\n${' '.repeat(80)}\nbottom`, 'top\n\nbottom'],
    ['a screen without trailing spaces is unchanged', 'plain\ntext', 'plain\ntext'],
  ])('%s', (_name, screen, expected) => {
    expect(renderScreen(screen)).toBe(expected);
  });
});
