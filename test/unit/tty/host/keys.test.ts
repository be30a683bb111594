import { describe, expect, it } from 'vitest';
import { isCodedError } from '../../../../src/errors.js';
import { NAMED_KEYS, keyBytes, parseTypedText } from '../../../../src/tty/host/keys.js';

describe('parseTypedText', () => {
  it.each([
    ['C-c', { kind: 'key', key: 'C-c' }],
    ['C-d', { kind: 'key', key: 'C-d' }],
    ['C-z', { kind: 'key', key: 'C-z' }],
    ['Enter', { kind: 'key', key: 'Enter' }],
    ['Tab', { kind: 'key', key: 'Tab' }],
    ['Escape', { kind: 'key', key: 'Escape' }],
    ['BSpace', { kind: 'key', key: 'BSpace' }],
    ['PageDown', { kind: 'key', key: 'PageDown' }],
    ['F1', { kind: 'key', key: 'F1' }],
    ['F12', { kind: 'key', key: 'F12' }],
    ['ls -la', { kind: 'text', text: 'ls -la' }],
    ['-n', { kind: 'text', text: '-n' }],
    ['enter', { kind: 'text', text: 'enter' }],
    ['echo Enter', { kind: 'text', text: 'echo Enter' }],
    ['ls\n', { kind: 'text', text: 'ls' }],
    ['', { kind: 'text', text: '' }],
    ['a\nb', { kind: 'paste', text: 'a\nb' }],
    ['a\r\nb\r\n', { kind: 'paste', text: 'a\nb' }],
  ])('%j', (text, expected) => {
    expect(parseTypedText(text)).toEqual(expected);
  });

  it.each(['C-q1', 'F13', 'F0', 'M-x', 'S-Tab', 'C-Enter'])('refuses %j as an unknown key, listing the valid ones', (text) => {
    try {
      parseTypedText(text);
      expect.unreachable();
    } catch (error) {
      expect(isCodedError(error, 'UNKNOWN_KEY')).toBe(true);
      expect((error as Error).message).toContain(text);
      expect((error as Error).message).toContain('F1-F12');
    }
  });
});

describe('keyBytes (what a PTY gets for a key name)', () => {
  it.each([
    ['C-c', false, '\x03'],
    ['C-d', false, '\x04'],
    ['C-z', false, '\x1a'],
    ['Enter', false, '\r'],
    ['BSpace', false, '\x7f'],
    ['Up', false, '\x1b[A'],
    ['Up', true, '\x1bOA'],
    ['Home', true, '\x1bOH'],
    ['F1', false, '\x1bOP'],
    ['F12', false, '\x1b[24~'],
  ])('%s (application cursor %s)', (key, applicationCursor, bytes) => {
    expect(keyBytes(key, applicationCursor)).toBe(bytes);
  });

  it('knows every key type() accepts', () => {
    for (const key of [...NAMED_KEYS, 'C-a', 'C-z']) {
      expect(parseTypedText(key).kind).toBe('key');
      expect(keyBytes(key).length).toBeGreaterThan(0);
    }
  });
});
