import { describe, expect, it } from 'vitest';
import { isShell, normalizeProgram, programMatches } from '../../../../src/tty/probe/program-name.js';

describe('programMatches', () => {
  it.each([
    ['bash', 'bash', true],
    ['bash', '-bash', true],
    ['python3', 'python3.11', true],
    ['python', 'python3.11', true],
    ['python3.11', 'python3', true],
    ['python2', 'python3.11', false],
    ['Vim', 'vim', true],
    ['vim', 'vi', false],
    ['/usr/bin/less', 'less', true],
    ['node', 'nodejs', false],
    ['bash', 'sleep', false],
    ['', 'bash', false],
  ])('%j vs %j → %j', (expected, actual, result) => {
    expect(programMatches(expected, actual)).toBe(result);
  });

  it('normalises paths and login dashes', () => {
    expect(normalizeProgram('/usr/bin/Python3.11')).toBe('python3.11');
    expect(normalizeProgram('-bash')).toBe('bash');
  });

  it('knows shells', () => {
    expect(isShell('bash')).toBe(true);
    expect(isShell('-zsh')).toBe(true);
    expect(isShell('python3')).toBe(false);
  });
});
