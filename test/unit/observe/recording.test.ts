import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Recording } from '../../../src/observe/recording.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ak-recording-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Recording', () => {
  it('gathers output written within a flush into one event, after the header', async () => {
    const file = path.join(dir, 'r.cast');
    const recording = new Recording(file, { cols: 80, rows: 24, title: 'TTY 0: bash' }, 1024 * 1024);
    recording.output(Buffer.from('one '));
    recording.output(Buffer.from([0xc3]));
    recording.output(Buffer.from([0xa9, 0x0a]));
    recording.marker('$ ls');
    await recording.close();
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ version: 2, width: 80, height: 24, title: 'TTY 0: bash' });
    expect(lines.slice(1).map((l) => (JSON.parse(l) as [number, string, string]).slice(1))).toEqual([
      ['o', 'one é\n'],
      ['m', '$ ls'],
    ]);
  });

  it('stops at maxBytes counted in bytes, not characters (multi-byte text), and says so', async () => {
    const file = path.join(dir, 'r.cast');
    const recording = new Recording(file, { cols: 80, rows: 24, title: 't' }, 4096);
    // Each marker is about 320 bytes of UTF-8 but 110 characters.
    for (let i = 0; i < 40; i++) recording.marker('界'.repeat(100));
    await recording.close();
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    expect(lines.at(-1)).toContain('recording stopped: it reached 4096 bytes');
    // At most the event that crossed the cap and the marker that says so are past it.
    expect((await stat(file)).size).toBeLessThan(4096 + 330 + 100);
  });
});
