import { describe, expect, it } from 'vitest';
import { decodeOctalEscapes, quoteTmuxArgument } from '../../../../src/tty/host/tmux-escape.js';

describe('decodeOctalEscapes', () => {
  it.each([
    ['plain text', 'hello', Buffer.from('hello')],
    ['CR LF', 'a\\015\\012b', Buffer.from('a\r\nb')],
    ['escape and backslash', '\\033[1m\\134x', Buffer.from('\x1b[1m\\x')],
    ['raw UTF-8 bytes pass through', Buffer.from('é€'), Buffer.from('é€')],
    ['a backslash without three octal digits stays', 'a\\9b\\01', Buffer.from('a\\9b\\01')],
    ['a lone trailing backslash', 'x\\', Buffer.from('x\\')],
  ])('%s', (_name, input, expected) => {
    const bytes = typeof input === 'string' ? Buffer.from(input, 'latin1') : input;
    expect(decodeOctalEscapes(bytes)).toEqual(expected);
  });

  it('decodes a slice of a longer line', () => {
    const line = Buffer.from('%output %1 ab\\012');
    expect(decodeOctalEscapes(line, 11).toString()).toBe('ab\n');
  });

  it('keeps a multi-byte character split across two lines intact once joined', () => {
    const euro = Buffer.from('€');
    const joined = Buffer.concat([decodeOctalEscapes(euro.subarray(0, 1)), decodeOctalEscapes(euro.subarray(1))]);
    expect(joined.toString()).toBe('€');
  });
});

describe('quoteTmuxArgument', () => {
  it.each([
    ['plain', 'ls -la', '"ls -la"'],
    ['double quotes, dollars and backslashes', 'echo "$HOME" \\n', '"echo \\"\\$HOME\\" \\\\n"'],
    ['newline and tab as octal', 'a\nb\tc', '"a\\012b\\011c"'],
    ['semicolons and braces stay inside the quotes', 'a; b {c}', '"a; b {c}"'],
    ['UTF-8', 'café 中文', '"café 中文"'],
  ])('%s', (_name, input, expected) => {
    expect(quoteTmuxArgument(input)).toBe(expected);
  });
});
