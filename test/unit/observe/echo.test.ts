import { describe, expect, it } from 'vitest';
import { type SentInput, echoLines, onlyEcho, typedLines } from '../../../src/observe/echo.js';

const text = (t: string, enter = true): SentInput => ({ text: t, enter });
const key = (k: string): SentInput => ({ key: k });

describe('echo: what the agent typed is not news', () => {
  it.each<[string, string[], string, SentInput[], boolean]>([
    ['cat > file, then hello', ['hello'], '', [text('hello')], true],
    ['hello, world, then C-d', ['hello', 'world'], '', [text('hello'), text('world'), key('C-d')], true],
    ['echo still arriving', ['hel'], '', [text('hello')], true],
    ['nothing echoed yet', [], '', [text('hello')], true],
    ['a shell prompt, then the command typed at it', ['root@h:/# sleep 9'], 'root@h:/# ', [text('sleep 9')], true],
    ['a password not echoed, the cursor on the next row', ['Password:'], 'Password: ', [text('secret')], true],
    ['text without Enter, then Enter', ['name? ada'], 'name? ', [text('ada', false), key('Enter')], true],
    ['BSpace erases what was typed', ['abd'], '', [text('abc', false), key('BSpace'), text('d', false)], true],
    ['a paste after continuation prompts', ['for i in 1 2; do', '> echo $i', '> done'], '', [text('for i in 1 2; do\necho $i\ndone')], true],
    ['output after the echo is news', ['hello', 'HELLO'], '', [text('hello')], false],
    ['a prompt printed after the echo is news', ['$ true', '$'], '$ ', [text('true')], false],
    ['the program rewrote the line', ['done 100%'], '', [text('hello')], false],
    ['Tab completed something: not known', ['$ ls /usr/'], '$ ', [text('ls /us', false), key('Tab')], false],
    ['what came before anything was typed is news', ['warning: disk full'], '', [], false],
  ])('%s', (_name, shown, prefix, sent, echo) => {
    expect(onlyEcho(shown, prefix, sent)).toBe(echo);
  });

  it('lines typed, and the one still being typed', () => {
    expect(echoLines([text('a'), text('b\nc', false), key('Enter'), text('d', false)])).toEqual({ lines: ['a', 'b', 'c'], current: 'd', predictable: true });
    expect(echoLines([text('a'), key('Up'), text('b')])).toEqual({ lines: ['a'], current: '', predictable: false });
  });

  it('the lines typed since the last look, for leaving their echo out of a report', () => {
    expect(typedLines([text('hello'), text('world'), key('C-d')])).toEqual(['hello', 'world']);
    expect(typedLines([key('C-d')])).toEqual([]);
    expect(typedLines([])).toEqual([]);
  });
});
