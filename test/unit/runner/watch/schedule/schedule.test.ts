import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCodedError } from '../../../../../src/errors.js';
import { loadSchedule, nextWake, parseSchedule, removeFiredWake } from '../../../../../src/runner/watch/schedule/schedule.js';

describe('parseSchedule', () => {
  it('accepts one-shot times and cron expressions with notes', () => {
    const schedule = parseSchedule({
      wakes: [
        { at: '2026-11-22T08:00:00Z', note: 'check the build' },
        { cron: '0 9 * * 1-5', note: 'morning review' },
        { cron: '@hourly' },
      ],
    });
    expect(schedule.wakes).toHaveLength(3);
    expect(schedule.wakes[2]).toEqual({ cron: '@hourly', note: '' });
  });

  it('treats a missing file (undefined) as an empty schedule', () => {
    expect(parseSchedule(undefined).wakes).toEqual([]);
  });

  it.each([
    [{ wakes: [{ at: 'tomorrow' }] }, /schedule\.json: wakes\.0\.at: expected an ISO 8601 time/],
    [{ wakes: [{ at: '2026-11-22T08:00:00Z' }, { cron: '61 * * * *' }] }, /schedule\.json: wakes\.1\.cron: cron expression "61 \* \* \* \*": minute field: 61 is out of range/],
    [{ wakes: [{ cron: '* * *', note: 'x' }] }, /wakes\.0\.cron: .*expected 5 fields/],
    [{ wakes: [{ cron: '* * * * *', note: 3 }] }, /schedule\.json: wakes\.0\.note: /],
    [{ wakes: [{ at: '2026-11-22T08:00:00Z', cron: '* * * * *' }] }, /wakes\.0: give either "at" \(one time\) or "cron"/],
    [{ wakes: [{ when: 'now' }] }, /wakes\.0: needs "at"/],
    [{ wakes: ['0 9 * * *'] }, /wakes\.0: expected an object/],
    [{ wake: [] }, /schedule\.json: \(top level\).*wake/],
  ])('%j is refused, naming the field', (input, message) => {
    let caught: unknown;
    try {
      parseSchedule(input);
    } catch (error) {
      caught = error;
    }
    expect(isCodedError(caught, 'CONFIG_INVALID')).toBe(true);
    expect((caught as Error).message).toMatch(message);
    expect((caught as Error).message).toMatch(/until then no scheduled wake fires/);
  });
});

describe('nextWake', () => {
  const after = new Date('2026-11-22T08:30:00Z');
  it('picks the earliest wake; a past one-shot is due at its own (past) time', () => {
    const schedule = parseSchedule({
      wakes: [
        { cron: '*/5 * * * *', note: 'cron' },
        { at: '2026-11-22T08:00:00Z', note: 'late' },
      ],
    });
    const wake = nextWake(schedule, after);
    expect(wake).toMatchObject({ kind: 'at', note: 'late', index: 1 });
    expect(wake?.time.toISOString()).toBe('2026-11-22T08:00:00.000Z');
  });

  it('gives the next cron time after the cursor', () => {
    const wake = nextWake(parseSchedule({ wakes: [{ cron: '*/5 * * * *', note: 'c' }] }), after);
    expect(wake?.time.getTime()).toBe(new Date('2026-11-22T08:35:00Z').getTime());
    expect(wake?.kind).toBe('cron');
  });

  it('is undefined for an empty schedule', () => {
    expect(nextWake(parseSchedule({}), after)).toBeUndefined();
  });
});

describe('loadSchedule and removeFiredWake', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'schedule-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reports bad JSON with the file name', async () => {
    const file = path.join(dir, 'schedule.json');
    await writeFile(file, '{"wakes": [');
    await expect(loadSchedule({ root: dir, schedule: file })).rejects.toThrow(/schedule\.json: is not valid JSON/);
  });

  it('removes a fired one-shot and keeps the rest', async () => {
    const file = path.join(dir, 'schedule.json');
    await writeFile(file, JSON.stringify({ wakes: [{ cron: '0 9 * * *', note: 'daily' }, { at: '2026-01-01T00:00:00Z', note: 'once' }] }));
    const loaded = await loadSchedule({ root: dir, schedule: file });
    const wake = nextWake(loaded.schedule, new Date('2026-11-22T08:30:00Z'))!;
    expect(wake.note).toBe('once');
    expect(await removeFiredWake({ root: dir, schedule: file }, loaded, wake)).toBe(true);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ wakes: [{ cron: '0 9 * * *', note: 'daily' }] });
  });

  it('leaves the file alone when it changed since it was read', async () => {
    const file = path.join(dir, 'schedule.json');
    await writeFile(file, JSON.stringify({ wakes: [{ at: '2026-01-01T00:00:00Z', note: 'once' }] }));
    const loaded = await loadSchedule({ root: dir, schedule: file });
    const wake = nextWake(loaded.schedule, new Date())!;
    const rewritten = JSON.stringify({ wakes: [{ at: '2026-01-01T00:00:00Z', note: 'once' }, { cron: '@daily', note: 'new' }] });
    await writeFile(file, rewritten);
    expect(await removeFiredWake({ root: dir, schedule: file }, loaded, wake)).toBe(false);
    expect(await readFile(file, 'utf8')).toBe(rewritten);
  });
});
