import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RECORDING } from '../../../src/observe/recording.js';
import { ARCHIVE, freshTickFile, parseTickFileName, pruneOldTicks, tickFileName } from '../../../src/observe/tick-files.js';

describe('files kept per terminal per tick', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'tick-files-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('names and parses recordings and archives, parts included', () => {
    expect(tickFileName(RECORDING, 3, 7)).toBe('tty_3-tick-007.cast');
    expect(tickFileName(ARCHIVE, 3, 1234, 2)).toBe('tty_3-tick-1234-2');
    expect(parseTickFileName(RECORDING, 'tty_3-tick-007-2.cast')).toEqual({ tty: 3, tick: 7, between: false, part: 2 });
    expect(parseTickFileName(ARCHIVE, 'tty_12-tick-042')).toEqual({ tty: 12, tick: 42, between: false, part: 1 });
    // Work while no tick runs, after tick 2: named so, and read back so.
    expect(tickFileName(RECORDING, 1, 2, 3, true)).toBe('tty_1-between-002-3.cast');
    expect(parseTickFileName(RECORDING, 'tty_1-between-002-3.cast')).toEqual({ tty: 1, tick: 2, between: true, part: 3 });
    for (const name of ['tty_3-tick-007.cast.tmp', 'tty_3-tick-7', 'x-tty_3-tick-007', 'tty_3-tick-007.cast']) expect(parseTickFileName(ARCHIVE, name)).toBeUndefined();
  });

  it('gives a number used again in the same tick a new name', async () => {
    expect(freshTickFile(ARCHIVE, dir, 2, 5)).toBe(path.join(dir, 'tty_2-tick-005'));
    await writeFile(path.join(dir, 'tty_2-tick-005'), 'a');
    await writeFile(path.join(dir, 'tty_2-tick-005-2'), 'b');
    expect(freshTickFile(ARCHIVE, dir, 2, 5)).toBe(path.join(dir, 'tty_2-tick-005-3'));
  });

  it("keeps the total under its cap by removing the oldest ticks' files, never the current tick's or other files", async () => {
    const kb = 'x'.repeat(1024);
    for (const [name, size] of [['tty_0-tick-001', 3], ['tty_1-tick-001', 3], ['tty_0-tick-002', 3], ['tty_0-tick-003', 3], ['tty_0-tick-003-2', 3], ['notes.txt', 50]] as const) {
      await writeFile(path.join(dir, name), kb.repeat(size));
    }
    await pruneOldTicks(ARCHIVE, dir, 7 * 1024, 3);
    expect((await readdir(dir)).sort()).toEqual(['notes.txt', 'tty_0-tick-003', 'tty_0-tick-003-2']);
    // Over the cap with only the current tick's files: they stay.
    await pruneOldTicks(ARCHIVE, dir, 1024, 3);
    expect((await readdir(dir)).sort()).toEqual(['notes.txt', 'tty_0-tick-003', 'tty_0-tick-003-2']);
  });
});
