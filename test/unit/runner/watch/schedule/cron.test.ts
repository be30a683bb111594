import { describe, expect, it } from 'vitest';
import { CronSyntaxError, nextCronTime, parseCron } from '../../../../../src/runner/watch/schedule/cron.js';

/** Local time, as cron uses: `local(2026, 11, 22, 8, 30)` is 22 Nov 2026 08:30 on this host. */
function local(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): Date {
  return new Date(year, month - 1, day, hour, minute, second);
}

function fmt(d: Date | undefined): string {
  if (!d) return 'none';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

describe('nextCronTime', () => {
  // 2026-11-22 is a Sunday.
  const from = local(2026, 11, 22, 8, 30, 15);
  it.each([
    ['* * * * *', from, '2026-11-22 08:31'],
    ['*/15 * * * *', from, '2026-11-22 08:45'],
    ['0 * * * *', from, '2026-11-22 09:00'],
    ['30 8 * * *', from, '2026-11-23 08:30'],
    ['0 9 * * 1-5', from, '2026-11-23 09:00'],
    ['0 9 * * MON-FRI', from, '2026-11-23 09:00'],
    ['0 9 * * 0', from, '2026-11-22 09:00'],
    ['0 9 * * 7', from, '2026-11-22 09:00'],
    ['0 0 1 * *', from, '2026-12-01 00:00'],
    ['0 0 1 1 *', from, '2027-01-01 00:00'],
    ['0 0 1 jan *', from, '2027-01-01 00:00'],
    ['15,45 8-9 * * *', from, '2026-11-22 08:45'],
    ['1-30/10 * * * *', from, '2026-11-22 09:01'],
    ['5/20 * * * *', from, '2026-11-22 08:45'],
    ['0 0 29 2 *', from, '2028-02-29 00:00'],
    ['0 0 31 2 *', from, 'none'],
    // Both day fields restricted: either one matches (cron's rule). 2026-11-24 is a Tuesday.
    ['0 12 25 * 2', from, '2026-11-24 12:00'],
    // Day-of-month restricted, weekday "*": only the date counts.
    ['0 12 25 * *', from, '2026-11-25 12:00'],
    ['@hourly', from, '2026-11-22 09:00'],
    ['@daily', from, '2026-11-23 00:00'],
    ['@weekly', from, '2026-11-29 00:00'],
    ['59 23 31 12 *', from, '2026-12-31 23:59'],
  ])('%s after %s is %s', (expression, after, expected) => {
    expect(fmt(nextCronTime(parseCron(expression), after))).toBe(expected);
  });

  it('is strictly after the given time, even on a matching minute', () => {
    expect(fmt(nextCronTime(parseCron('30 8 * * *'), local(2026, 11, 22, 8, 30, 0)))).toBe('2026-11-23 08:30');
  });

  it('crosses a year boundary', () => {
    expect(fmt(nextCronTime(parseCron('0 0 * * *'), local(2026, 12, 31, 23, 59, 59)))).toBe('2027-01-01 00:00');
  });
});

describe('parseCron errors name the field', () => {
  it.each([
    ['* * * *', /expected 5 fields/],
    ['* * * * * *', /expected 5 fields/],
    ['60 * * * *', /minute field: 60 is out of range 0-59/],
    ['* 24 * * *', /hour field: 24 is out of range 0-23/],
    ['* * 0 * *', /day-of-month field: 0 is out of range 1-31/],
    ['* * * 13 *', /month field: 13 is out of range 1-12/],
    ['* * * * 8', /day-of-week field: 8 is out of range 0-7/],
    ['*/0 * * * *', /minute field: step "0" must be a positive number/],
    ['5-1 * * * *', /minute field: range 5-1 runs backwards/],
    ['a * * * *', /minute field: "a" is not a number/],
    ['* * * FOO *', /month field: "FOO" is not a number or a name \(JAN/],
    ['1,,2 * * * *', /minute field: empty list item/],
    ['1-2-3 * * * *', /minute field: cannot read range/],
  ])('%s', (expression, message) => {
    expect(() => parseCron(expression)).toThrow(CronSyntaxError);
    expect(() => parseCron(expression)).toThrow(message);
  });
});

describe('parseCron refuses what cron cannot run, in our words', () => {
  it('a step longer than the field', () => {
    expect(() => parseCron('*/90 * * * *')).toThrow(CronSyntaxError);
  });
});
