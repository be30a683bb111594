import { describe, expect, it } from 'vitest';
import { foregroundOf, parseProcessTable } from '../../../../src/tty/probe/process-table.js';

const stat = (pid: number, name: string, ppid: number, pgid: number, sid: number, tpgid: number, start: number, rssPages = 100) =>
  `${pid} (${name}) S ${ppid} ${pgid} ${sid} 34816 ${tpgid} 4194560 100 0 0 0 0 0 0 0 20 0 1 0 ${start} 1000000 ${rssPages} 184467`;

describe('process table', () => {
  it('reads names with spaces and parentheses, and memory in KiB', () => {
    const [entry] = parseProcessTable(stat(42, 'my (odd) name', 1, 42, 42, 50, 900, 25));
    expect(entry).toMatchObject({ pid: 42, name: 'my (odd) name', ppid: 1, pgid: 42, sid: 42, tpgid: 50, startTime: 900, rssKb: 100 });
  });

  it('names the newest process of the foreground group (a pipeline whose first process ended)', () => {
    const table = parseProcessTable(
      [stat(10, 'bash', 1, 10, 10, 21, 100), stat(22, 'less', 10, 21, 10, 21, 205), stat(23, 'cat', 10, 21, 10, 21, 204), 'garbage', ''].join('\n'),
    );
    expect(foregroundOf(table, 10)?.name).toBe('less');
    expect(foregroundOf(table, 99)).toBeUndefined();
  });
});

describe('process table against names a process chose itself', () => {
  it('keeps a process whose name holds a newline and forged fields, and the records around it', () => {
    const text = [stat(10, 'bash', 1, 10, 10, 10, 100), stat(11, 'x\n12 (y) S 1', 10, 11, 10, 10, 101), stat(13, ') S 1 1 1 1 ', 11, 11, 10, 10, 102), ''].join('\n');
    expect(parseProcessTable(text).map((p) => [p.pid, p.name, p.ppid])).toEqual([
      [10, 'bash', 1],
      [11, 'x\n12 (y) S 1', 10],
      [13, ') S 1 1 1 1 ', 11],
    ]);
  });

  it('reads every record of a randomized table of hostile names exactly (2,000 trials)', () => {
    const alphabet = ['a', 'Z', '0', '9', ' ', '(', ')', '\n', ') ', ' (', 'S', '-', 'é', '\u0000'];
    for (let trial = 0; trial < 2000; trial++) {
      const procs = Array.from({ length: 1 + (trial % 7) }, (_, i) => {
        let name = '';
        while (name.length < Math.floor(Math.random() * 16)) name += alphabet[Math.floor(Math.random() * alphabet.length)];
        return { pid: 100 + i, name: name.slice(0, 15), ppid: 99 + i };
      });
      const text = procs.map((p) => stat(p.pid, p.name, p.ppid, p.pid, 1, 1, p.pid)).join('\n') + '\n';
      expect(parseProcessTable(text).map((p) => ({ pid: p.pid, name: p.name, ppid: p.ppid }))).toEqual(procs);
    }
  });
});
