import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../../../src/errors.js';
import { codedErrorText } from '../../../../src/server/tools/tool-result.js';

describe('codedErrorText: the next step, once', () => {
  // Messages as the terminal manager writes them.
  it.each<[ErrorCode, string]>([
    ['TTY_CAPACITY', 'All 20 terminals are in use. Close one you no longer need with close(tty), then open again.'],
    ['TTY_IN_USE', 'TTY 3 is already open. Use it, close it with close(3) first, or open another number.'],
    ['UNSEEN_OUTPUT', 'TTY 2 has output you have not seen. Call wait() first, then type again.'],
  ])('%s: a message that names its next call gets no second hint', (code, message) => {
    expect(codedErrorText(code, message)).toBe(`${code}: ${message}`);
  });

  it.each<[ErrorCode, string, RegExp]>([
    ['TTY_NOT_FOUND', 'TTY 4 is not open.', /\nCall wait\(\) to list the open terminals, or open\(\) a new one\.$/],
    ['NOT_LOGGED_IN', 'No session yet.', /\nCall login\(\) first\.$/],
  ])('%s: a message without one gets the hint', (code, message, hint) => {
    expect(codedErrorText(code, message)).toMatch(hint);
  });

  it('does not contradict the manager about how many terminals there are', () => {
    const text = codedErrorText('TTY_OUT_OF_RANGE', 'There is no TTY 7: terminals are numbered 0 to 4.');
    expect(text).not.toMatch(/0-19/);
    expect(text).toMatch(/call wait\(\)/i);
  });
});
