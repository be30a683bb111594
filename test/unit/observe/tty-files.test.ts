import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseTtyStatusFile } from '../../../src/state/tty-status-file.js';
import type { Row } from '../../../src/observe/screen-source.js';
import { MAX_KEPT } from '../../../src/observe/scrollback-file.js';
import { TtyFiles, type TtySnapshot, keepLostScrollback } from '../../../src/observe/tty-files.js';

let root: string;
let dir: string;
let screen = 'screen 1';

const snapshot = (): TtySnapshot => ({
  screen,
  screenAnsi: `\x1b[1m${screen}\x1b[0m`,
  status: { tty: 3, command: 'bash', program: 'bash', alive: true, lastActivity: new Date(0).toISOString(), highWaterMark: 0, unseen: false, cols: 80, rows: 24, fullScreen: false },
});
const rows = (from: number, texts: string[], wrapped: number[] = []): Row[] => texts.map((text, i) => ({ abs: from + i, text, wrapped: wrapped.includes(from + i) }));
const read = (name: string): Promise<string> => readFile(path.join(dir, name), 'utf8');

function files(rawMaxBytes = 1000, scrollbackMaxBytes = 1_000_000, scrollbackRows = 0): Promise<TtyFiles> {
  return TtyFiles.open(dir, { rawMaxBytes, scrollbackMaxBytes, scrollbackRows, snapshot });
}

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tty-files-'));
  dir = path.join(root, 'tty_3');
  screen = 'screen 1';
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('TtyFiles', () => {
  it('writes screen, screen.ansi and a status that parses, and appends every raw byte', async () => {
    const f = await files();
    f.appendRaw(Buffer.from('hello '));
    f.appendRaw(Buffer.from('world'));
    await f.flush();
    expect(await read('screen')).toBe('screen 1\n');
    expect(await read('screen.ansi')).toBe('\x1b[1mscreen 1\x1b[0m');
    expect(parseTtyStatusFile(JSON.parse(await read('status')))).toMatchObject({ tty: 3, program: 'bash', alive: true });
    expect(await read('raw')).toBe('hello world');
    await f.close();
  });

  it('rewrites the snapshot by itself soon after a change, not only when flushed', async () => {
    const f = await files();
    f.schedule();
    await expect.poll(() => read('screen').catch(() => ''), { timeout: 10_000 }).toBe('screen 1\n');
    screen = 'screen 2';
    f.appendRaw(Buffer.from('x'));
    await expect.poll(() => read('screen').catch(() => ''), { timeout: 10_000 }).toBe('screen 2\n');
    await f.close();
  });

  it('appends rows that left the screen once each, joining wrapped rows to the line they continue', async () => {
    const f = await files();
    f.appendRows(rows(0, ['one', 'two-a', '-b'], [2]));
    f.appendRows(rows(1, ['two-a', '-b', 'three'])); // rows 1-2 again: already written
    await f.flush();
    expect(await read('scrollback')).toBe('one\ntwo-a-b\nthree');
    expect(f.scrollbackRows).toBe(4);
    await f.close();
  });

  it('continues an existing scrollback file after a restart without a blank line or repeats', async () => {
    const first = await files();
    first.appendRows(rows(0, ['a', 'b']));
    await first.close();
    const second = await files(1000, 1_000_000, first.scrollbackRows);
    second.appendRows(rows(1, ['b', 'c']));
    await second.flush();
    expect(await read('scrollback')).toBe('a\nb\nc');
    await second.close();
  });

  it('rotates the scrollback past its cap to numbered files at line boundaries, and points at exact lines across files', async () => {
    const f = await files(1000, 20);
    f.anchorAt(0);
    const texts = Array.from({ length: 30 }, (_, i) => `line ${i}`);
    // Row 5 continues row 4 (a wrapped line): a rotation never splits it.
    for (let i = 0; i < 30; i += 3) f.appendRows(rows(i, texts.slice(i, i + 3), [5]));
    await f.flush();
    const names = (await readdir(dir)).filter((n) => n.startsWith('scrollback')).sort();
    expect(names.length).toBeGreaterThan(2);
    const all = [];
    for (const name of [...names.filter((n) => n !== 'scrollback').sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1])), 'scrollback']) {
      all.push(...(await read(name)).split('\n'));
    }
    const want = texts.filter((_, i) => i !== 5).map((t, i) => (i === 4 ? 'line 4line 5' : t));
    expect(all).toEqual(want);
    // Lines 3..20 (0-based) from the anchor, named file by file, are exactly those lines.
    const where = f.locate(3, 20)!;
    expect(where.onScreen).toBe(0);
    const got = [];
    for (const r of where.ranges) got.push(...(await readFile(r.file, 'utf8')).split('\n').slice(r.from - 1, r.to));
    expect(got).toEqual(want.slice(3, 21));
    // Past the last line written: on the screen.
    expect(f.locate(25, 40)).toMatchObject({ onScreen: 40 - 29 + 1 });
    await f.close();
  });

  it('keeps rotated files that hold lines the agent has not been shown, and removes older ones once shown', async () => {
    const f = await files(1000, 10);
    f.anchorAt(0);
    for (let i = 0; i < 20; i++) f.appendRows(rows(i, [`row ${i} xxxxxxxx`]));
    await f.flush();
    const rotated = (await readdir(dir)).filter((n) => /^scrollback\.\d+$/.test(n));
    expect(rotated.length).toBe(MAX_KEPT);
    // A wait showed rows 0-19, the next one rows 20-22: only the files the last pointer may name stay.
    f.anchorAt(20);
    for (let i = 20; i < 23; i++) f.appendRows(rows(i, [`row ${i} xxxxxxxx`]));
    f.anchorAt(23);
    for (let i = 23; i < 26; i++) f.appendRows(rows(i, [`row ${i} xxxxxxxx`]));
    await f.flush();
    const left = (await readdir(dir)).filter((n) => /^scrollback\.\d+$/.test(n));
    expect(left.map((n) => Number(n.split('.')[1])).sort((a, b) => a - b)).toEqual([21, 22, 23, 24, 25]);
    expect(await read('scrollback.21')).toBe('row 20 xxxxxxxx');
    await f.close();
  });

  it('points at exactly the lines asked for, in random trials of wrapped rows, batch sizes, caps and reports', async () => {
    for (let trial = 0; trial < 25; trial++) {
      await rm(dir, { recursive: true, force: true });
      const f = await files(1000, 256 + Math.floor(Math.random() * 400));
      // Logical lines as the tracker counts them from the anchor row: a row starts a line unless wrapped.
      let abs = 0;
      f.anchorAt(0);
      let lines: string[] = [];
      for (let report = 0; report < 4; report++) {
        const count = 1 + Math.floor(Math.random() * 120);
        for (let sent = 0; sent < count; ) {
          const batch: Row[] = [];
          for (let i = 0, n = 1 + Math.floor(Math.random() * 9); i < n && sent < count; i++, sent++, abs++) {
            const wrapped = abs > 0 && Math.random() < 0.2;
            const text = `r${abs}`;
            batch.push({ abs, text, wrapped });
            if (wrapped && lines.length > 0) lines[lines.length - 1] += text;
            else lines.push(text);
          }
          f.appendRows(batch);
        }
        await f.flush();
        const from = Math.floor(Math.random() * lines.length);
        const to = from + Math.floor(Math.random() * (lines.length - from));
        const where = f.locate(from, to)!;
        const got: string[] = [];
        for (const r of where.ranges) got.push(...(await readFile(r.file, 'utf8')).split('\n').slice(r.from - 1, r.to));
        expect(where.onScreen).toBe(0);
        // The line holding the anchor row may begin with rows of the line before it (a wrapped anchor row).
        expect(got.slice(1)).toEqual(lines.slice(from, to + 1).slice(1));
        expect(got[0]?.endsWith(lines[from]!)).toBe(true);
        f.anchorAt(abs);
        lines = [];
      }
      await f.close();
    }
  });

  it('keeps at most MAX_KEPT rotated files when the agent is not looking, and then says it cannot point at the lines', async () => {
    const f = await files(1000, 10);
    f.anchorAt(0);
    for (let i = 0; i < 40; i++) f.appendRows(rows(i, [`row ${i} xxxxxxxx`]));
    await f.flush();
    const rotated = (await readdir(dir)).filter((n) => /^scrollback\.\d+$/.test(n));
    expect(rotated.length).toBe(MAX_KEPT);
    expect(f.locate(0, 30)).toBeUndefined();
    await f.close();
  });

  it('splits one endless line across files rather than let the scrollback grow without bound', async () => {
    const f = await files(1000, 100);
    f.appendRows(rows(0, ['start']));
    for (let i = 1; i < 60; i++) f.appendRows([{ abs: i, text: 'x'.repeat(20), wrapped: true }]);
    await f.flush();
    expect((await stat(path.join(dir, 'scrollback'))).size).toBeLessThan(300);
    expect((await readdir(dir)).filter((n) => /^scrollback\.\d+$/.test(n)).length).toBe(1);
    await f.close();
  });

  it('keeps raw under its cap: past it, the old file becomes raw.1 and a new one starts', async () => {
    const f = await files(10);
    f.appendRaw(Buffer.from('0123456'));
    await f.flush();
    f.appendRaw(Buffer.from('789ab'));
    await f.flush();
    expect(await read('raw.1')).toBe('0123456');
    expect(await read('raw')).toBe('789ab');
    f.appendRaw(Buffer.from('X'.repeat(25)));
    await f.flush();
    expect(await read('raw')).toBe('X'.repeat(10));
    expect((await stat(path.join(dir, 'raw'))).size).toBeLessThanOrEqual(10);
    await f.close();
  });

  it('archives the scrollback plus the final screen rows and removes the live files', async () => {
    const f = await files();
    f.appendRows(rows(0, ['old']));
    f.appendRaw(Buffer.from('bytes'));
    const archive = path.join(root, 'logs', 'sessions', 'tty_3-tick-007');
    await f.archive(archive, rows(1, ['last screen']));
    expect(await readFile(archive, 'utf8')).toBe('old\nlast screen');
    await expect(stat(dir)).rejects.toThrow(/ENOENT/);
  });

  it('archives every kept rotated file in order, then the live one and the final rows, a block at a time', async () => {
    // Lines of 40 KB against a 64 KB cap: each file holds two lines, and a line spans blocks of the copy.
    const f = await files(1000, 64 * 1024);
    f.anchorAt(0);
    const texts = Array.from({ length: 9 }, (_, i) => `${i}`.repeat(40 * 1024));
    for (let i = 0; i < 9; i++) f.appendRows(rows(i, [texts[i]!]));
    await f.flush();
    expect((await readdir(dir)).filter((n) => /^scrollback\.\d+$/.test(n)).length).toBeGreaterThan(2);
    const archive = path.join(root, 'logs', 'sessions', 'tty_3-tick-007');
    await f.archive(archive, rows(9, ['last screen']));
    expect((await readFile(archive, 'utf8')).split('\n')).toEqual([...texts, 'last screen']);
    expect((await readdir(path.dirname(archive))).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('archives an empty file for a terminal that never scrolled', async () => {
    const f = await files();
    const archive = path.join(root, 'archive');
    await f.archive(archive, []);
    expect(await readFile(archive, 'utf8')).toBe('');
  });
});

describe('keepLostScrollback', () => {
  it.each([
    ['scrollback and screen', { scrollback: 'a\nb', screen: 'c' }, 'a\nb\nc'],
    ['only a screen', { screen: 'c' }, 'c'],
    ['only scrollback', { scrollback: 'a' }, 'a'],
    ['nothing', {}, ''],
  ])('keeps %s as scrollback.prev and removes the live files', async (_what, present: Record<string, string>, expected) => {
    await files();
    for (const [name, text] of Object.entries({ ...present, raw: 'r', status: '{}' })) await writeFile(path.join(dir, name), text);
    const prev = await keepLostScrollback(dir);
    expect(await readFile(prev, 'utf8')).toBe(expected);
    expect(await readdir(dir)).toEqual(['scrollback.prev']);
  });
});
