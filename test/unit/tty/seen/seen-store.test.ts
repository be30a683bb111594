import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type TtyState, loadSeenState, saveSeenState, seenStateFile } from '../../../../src/tty/seen/seen-store.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'seen-store-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const tty = (n: number, extra: Partial<TtyState> = {}): TtyState => ({
  tty: n,
  command: 'bash',
  paneId: `%${n}`,
  openedAt: '2026-11-23T12:00:00.000Z',
  cols: 120,
  rows: 40,
  markRow: 1000 + n,
  markHistory: 960,
  markDigest: 'abc',
  scrollbackRows: 960,
  ...extra,
});

describe('the seen store (ttys.json)', () => {
  it('gives back what was saved, terminals in order, including an undelivered mark', async () => {
    await saveSeenState(dir, [tty(4), tty(0, { shown: { row: 1200, history: 1100, digest: 'def' } })]);
    expect(await loadSeenState(dir)).toEqual({ version: 1, ttys: [tty(0, { shown: { row: 1200, history: 1100, digest: 'def' } }), tty(4)] });
  });

  it('is private to the host user (mode 0600) and replaced whole', async () => {
    await saveSeenState(dir, [tty(1)]);
    expect((await stat(seenStateFile(dir))).mode & 0o777).toBe(0o600);
    await saveSeenState(dir, []);
    expect(JSON.parse(await readFile(seenStateFile(dir), 'utf8'))).toEqual({ version: 1, ttys: [] });
  });

  it.each([
    ['missing', undefined],
    ['torn', '{"version": 1, "ttys": [{"tty": 0, '],
    ['not JSON', 'hello'],
    ['another version', JSON.stringify({ version: 2, ttys: [] })],
    ['a mark that is not a number', JSON.stringify({ version: 1, ttys: [{ ...tty(0), markRow: 'soon' }] })],
  ])('reads a %s file as empty: nothing is adopted blindly', async (_what, text) => {
    if (text !== undefined) await writeFile(seenStateFile(dir), text);
    expect(await loadSeenState(dir)).toEqual({ version: 1, ttys: [] });
  });
});
