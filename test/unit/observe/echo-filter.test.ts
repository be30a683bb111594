import { describe, expect, it } from 'vitest';
import { EchoFilter } from '../../../src/observe/echo-filter.js';

/** The lines the agent is shown of `lines` (new lines from the mark, the cursor's last) after `typed`. */
function shown(lines: readonly string[], typed: string, prefix = ''): string[] {
  const filter = new EchoFilter(prefix);
  const typedLines = typed.replace(/\s+$/, '').split('\n');
  return lines.filter((line, i) => !filter.isEcho(line, typedLines, i === lines.length - 1));
}

describe('EchoFilter', () => {
  it('leaves out the command line just typed, and only that', () => {
    expect(shown(['>>> 6*7', '42', '>>>'], '6*7', '>>> ')).toEqual(['42', '>>>']);
    expect(shown(['$ ls', 'a'], 'pwd', '$ ')).toEqual(['$ ls', 'a']);
  });

  it('leaves out a pasted script echoed line by line, with or without continuation prompts', () => {
    const paste = "python3 -c 'import time\nprint(1)'";
    expect(shown(["root@h:/# python3 -c 'import time", "print(1)'", '1'], paste, 'root@h:/# ')).toEqual(['1']);
    expect(shown(['>>> def f():', '...     return 7', '... ', '>>>'], 'def f():\n    return 7\n', '>>> ')).toEqual(['... ', '>>>']);
    // A REPL that got the paste in pieces (a busy machine) left a blank row between its lines.
    expect(shown(['>>> for i in range(3):', '', '...     print(i * 11)', '... ', '0', '>>> '], 'for i in range(3):\n    print(i * 11)\n', '>>> ')).toEqual(['... ', '0', '>>> ']);
  });

  it('leaves out echo between the output it causes (a REPL echoes a line, prints, then echoes the next)', () => {
    const script = 'print(1)\nprint(1)\n\nx = 2\nprint(x)';
    const rows = ['>>> print(1)', '1', '>>> print(1)', '1', '>>> ', '>>> x = 2', '>>> print(x)', '2', '>>> '];
    expect(shown(rows, script, '>>> ')).toEqual(['1', '1', '2', '>>> ']);
  });

  it('takes a row readline drew the end of a tall paste over (`C27EOFne 200: …`) for echo, not output', () => {
    const body = Array.from({ length: 200 }, (_, i) => `line ${String(i + 1).padStart(3, '0')}: the quick brown fox`);
    const typed = `cat > /tmp/c27.txt <<'C27EOF'\n${body.join('\n')}\nC27EOF`;
    // Lines 1-39 each on a row, then 40-200 and the terminator over one row, then the next prompt.
    const rows = [`# cat > /tmp/c27.txt <<'C27EOF'`, ...body.slice(0, 39), 'C27EOF00: the quick brown fox', '# '];
    expect(shown(rows, typed, '# ')).toEqual(['# ']);
    // Lines of one length leave only the last on the row; a paste sent in parts goes on after it.
    const even = Array.from({ length: 100 }, (_, i) => `row ${String(i + 1).padStart(4, '0')}`);
    expect(shown(['# cat <<E', ...even.slice(0, 39), 'row 0050', '> row 0051', ...even.slice(51, 60), 'row 0100', '> '], `cat <<E\n${even.join('\n')}`, '# ')).toEqual(['> ']);
  });

  it('keeps output that only looks like a later typed line, and lines when the echo does not match', () => {
    expect(shown(['$ cat', 'b', 'a', 'a', 'b', 'b'], 'cat\na\nb', '$ ')).toEqual(['b', 'a', 'b']);
    expect(shown(["root@h:/# python3 -c 'import time", "print(1)'", '1'], "python3 -c 'import time\nprint(2)'", 'root@h:/# ')).toEqual(["print(1)'", '1']);
  });

  it('takes the cursor line for echo still arriving, only there', () => {
    expect(shown(['$ echo hel'], 'echo hello', '$ ')).toEqual([]);
    expect(shown(['$ echo hel', 'x'], 'echo hello', '$ ')).toEqual(['$ echo hel', 'x']);
    expect(shown(['$ cat', '> li'], 'cat\nline', '$ ')).toEqual([]);
  });
});
