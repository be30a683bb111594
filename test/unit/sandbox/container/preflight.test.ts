import { describe, expect, it } from 'vitest';
import { parseTmuxVersion, tmuxVersionOk } from '../../../../src/sandbox/container/preflight.js';

describe('tmux version', () => {
  it.each([
    ['tmux 3.3a', [3, 3], true],
    ['tmux 3.2', [3, 2], true],
    ['tmux 3.1c', [3, 1], false],
    ['tmux 2.9a', [2, 9], false],
    ['tmux next-3.4', [3, 4], true],
    ['tmux 10.0', [10, 0], true],
  ] as const)('%s', (text, version, ok) => {
    const parsed = parseTmuxVersion(text);
    expect(parsed).toEqual(version);
    expect(tmuxVersionOk(parsed ?? [0, 0])).toBe(ok);
  });

  it('is undefined for anything else', () => {
    expect(parseTmuxVersion('sh: tmux: not found')).toBeUndefined();
  });
});
