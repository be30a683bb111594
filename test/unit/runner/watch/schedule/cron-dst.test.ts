import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextCronTime, parseCron } from '../../../../../src/runner/watch/schedule/cron.js';

/** Runs of `expression` after `from`, as ISO instants with offsets shown in UTC. */
function runs(expression: string, from: string, count: number): string[] {
  const schedule = parseCron(expression);
  const out: string[] = [];
  let at = new Date(from);
  for (let i = 0; i < count; i++) {
    const next = nextCronTime(schedule, at);
    if (!next) break;
    out.push(next.toISOString());
    at = next;
  }
  return out;
}

// Cron reads local time; these cases are about New York's changes in 2026 (Mar 8 forward, Nov 1 back).
describe('cron across daylight-saving changes (TZ=America/New_York)', () => {
  const saved = process.env.TZ;
  beforeAll(() => {
    process.env.TZ = 'America/New_York';
  });
  afterAll(() => {
    process.env.TZ = saved;
  });

  it('an hourly job runs in both 01:00 hours when the clock falls back', () => {
    // From 01:10 EDT (05:10Z): 01:00 EST (06:00Z) is next, then 02:00 EST.
    expect(runs('0 * * * *', '2026-11-01T05:10:00Z', 2)).toEqual(['2026-11-01T06:00:00.000Z', '2026-11-01T07:00:00.000Z']);
  });

  it('a half-hourly job runs at every half hour of the repeated hour', () => {
    expect(runs('*/30 * * * *', '2026-11-01T05:10:00Z', 4)).toEqual([
      '2026-11-01T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T06:00:00.000Z', // 01:00 EST
      '2026-11-01T06:30:00.000Z', // 01:30 EST
      '2026-11-01T07:00:00.000Z', // 02:00 EST
    ]);
  });

  it('a daily job at a time in the repeated hour runs once that day', () => {
    expect(runs('30 1 * * *', '2026-10-31T17:00:00Z', 2)).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']);
  });

  it('a daily job at a time the clock skips still runs that day, as the clock springs forward', () => {
    const [first, second] = runs('30 2 * * *', '2026-03-07T17:00:00Z', 2);
    expect(first?.slice(0, 10)).toBe('2026-03-08');
    expect(second).toBe('2026-03-09T06:30:00.000Z'); // 02:30 EDT
  });

  it('an hourly job does not run twice or skip around the spring-forward gap', () => {
    // 01:00 EST (06:00Z), then 03:00 EDT (07:00Z): the 02:00 hour does not exist.
    expect(runs('0 * * * *', '2026-03-08T05:30:00Z', 3)).toEqual([
      '2026-03-08T06:00:00.000Z',
      '2026-03-08T07:00:00.000Z',
      '2026-03-08T08:00:00.000Z',
    ]);
  });
});
