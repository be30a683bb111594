import { describe, expect, it } from 'vitest';
import { type CompletionFacts, judgeCompletion, parseReadingKeys } from '../../../../src/tty/probe/completion.js';

const base: CompletionFacts = {
  dead: false,
  commandFinished: false,
  program: 'bash',
  alternateScreen: false,
  readingKeys: undefined,
  quietMs: 0,
  settleMs: 1500,
};

describe('judgeCompletion', () => {
  it.each<[string, Partial<CompletionFacts>, string]>([
    ['a finished command is done at once', { commandFinished: true }, 'command-finished'],
    ['an exited process is done at once', { dead: true, quietMs: 0 }, 'exited'],
    ['output still flowing', { program: 'python3', quietMs: 200 }, 'running'],
    ['a shell at its prompt after silence', { quietMs: 1600 }, 'settled'],
    ['a full-screen program after silence', { program: 'vim', alternateScreen: true, quietMs: 1600 }, 'settled'],
    ['a silent command needs the terminal mode first', { program: 'sleep', quietMs: 1600 }, 'ask-termios'],
    ['a silent command in canonical mode is still running', { program: 'sleep', quietMs: 9000, readingKeys: false }, 'running'],
    ['a REPL reading keys has settled', { program: 'python3', quietMs: 1600, readingKeys: true }, 'settled'],
  ])('%s', (_name, facts, expected) => {
    expect(judgeCompletion({ ...base, ...facts })).toBe(expected);
  });
});

describe('parseReadingKeys', () => {
  it.each([
    ['speed 38400 baud; rows 40; columns 120;\n-parenb -parodd\nisig -icanon -iexten -echo', true],
    ['speed 38400 baud;\nisig icanon iexten echo echoe', false],
    ['stty: /dev/pts/9: No such file', undefined],
  ])('%j', (output, expected) => {
    expect(parseReadingKeys(output)).toBe(expected);
  });
});
