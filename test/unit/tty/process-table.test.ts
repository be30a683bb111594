import { describe, expect, it } from 'vitest';
import { foregroundOf, parseProcessTable } from '../../../src/tty/process-table.js';

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
