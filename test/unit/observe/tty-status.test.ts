import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatTtyTable, readTtyStatuses } from '../../../src/observe/tty-status.js';

describe('ls', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-ls-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads every tty_N/status, shows lost terminals, and prints a table', async () => {
    const status = (tty: number, extra: Record<string, unknown>) =>
      JSON.stringify({ tty, command: 'bash', program: 'bash', alive: true, lastActivity: '2026-11-21T23:50:01.123Z', highWaterMark: 0, unseen: false, cols: 120, rows: 40, fullScreen: false, ...extra });
    for (const [tty, extra] of [[0, {}], [2, { program: 'python3', unseen: true }], [11, { alive: false, exitCode: 130 }]] as const) {
      await mkdir(path.join(dir, `tty_${tty}`), { recursive: true });
      await writeFile(path.join(dir, `tty_${tty}`, 'status'), status(tty, extra));
    }
    await mkdir(path.join(dir, 'tty_5'));
    await writeFile(path.join(dir, 'tty_5', 'scrollback.prev'), 'old');
    await writeFile(path.join(dir, 'registry.json'), '{}');
    const rows = await readTtyStatuses(dir);
    expect(rows.map((r) => [r.tty, r.state, r.unseen])).toEqual([[0, 'running', false], [2, 'running', true], [5, 'lost', false], [11, 'exited (130)', false]]);
    expect(formatTtyTable(rows).split('\n')).toEqual([
      'TTY  PROGRAM  STATE         UNSEEN  LAST ACTIVITY         COMMAND',
      '0    bash     running       -       2026-11-21T23:50:01Z  bash',
      '2    python3  running       yes     2026-11-21T23:50:01Z  bash',
      '5    -        lost          -                             -',
      '11   bash     exited (130)  -       2026-11-21T23:50:01Z  bash',
    ]);
  });

  it('says so when there are no terminals', async () => {
    expect(formatTtyTable(await readTtyStatuses(path.join(dir, 'missing')))).toMatch(/^No terminals/);
  });
});
