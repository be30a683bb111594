/**
 * A small cron parser: five fields (minute hour day-of-month month day-of-week), each a
 * `*`, a number, a range `a-b`, a list `a,b,c`, or any of those with a step (`*\/15`, `1-30/2`).
 * Months and weekdays also take names (JAN..DEC, SUN..SAT); weekday 7 is Sunday too.
 * Times are the host's local time, as with cron.
 */

export interface CronSchedule {
  readonly expression: string;
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly daysOfMonth: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly daysOfWeek: ReadonlySet<number>;
  /** cron's rule: when both day fields are restricted, a day matching either one fires. */
  readonly dayOfMonthRestricted: boolean;
  readonly dayOfWeekRestricted: boolean;
}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  { name: 'day-of-week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

const MACROS: Readonly<Record<string, string>> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
};

export class CronSyntaxError extends Error {
  constructor(expression: string, problem: string) {
    super(`cron expression ${JSON.stringify(expression)}: ${problem}`);
    this.name = 'CronSyntaxError';
  }
}

function parseValue(text: string, spec: FieldSpec, expression: string): number {
  const upper = text.toUpperCase();
  const named = spec.names?.indexOf(upper) ?? -1;
  if (named >= 0) return spec.name === 'month' ? named + 1 : named;
  if (!/^\d+$/.test(text)) {
    const hint = spec.names ? ` or a name (${spec.names.join(', ')})` : '';
    throw new CronSyntaxError(expression, `${spec.name} field: ${JSON.stringify(text)} is not a number${hint}`);
  }
  const value = Number(text);
  if (value < spec.min || value > spec.max) {
    throw new CronSyntaxError(expression, `${spec.name} field: ${value} is out of range ${spec.min}-${spec.max}`);
  }
  return value;
}

function parseField(text: string, spec: FieldSpec, expression: string): { values: Set<number>; restricted: boolean } {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    if (part === '') throw new CronSyntaxError(expression, `${spec.name} field: empty list item in ${JSON.stringify(text)}`);
    const [rangeText, stepText, extra] = part.split('/');
    if (extra !== undefined || rangeText === undefined || rangeText === '') {
      throw new CronSyntaxError(expression, `${spec.name} field: cannot read ${JSON.stringify(part)}`);
    }
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) === 0) {
        throw new CronSyntaxError(expression, `${spec.name} field: step ${JSON.stringify(stepText)} must be a positive number`);
      }
      step = Number(stepText);
    }
    let low: number;
    let high: number;
    if (rangeText === '*') {
      low = spec.min;
      high = spec.name === 'day-of-week' ? 6 : spec.max;
    } else if (rangeText.includes('-')) {
      const [a, b, more] = rangeText.split('-');
      if (a === undefined || b === undefined || more !== undefined || a === '' || b === '') {
        throw new CronSyntaxError(expression, `${spec.name} field: cannot read range ${JSON.stringify(rangeText)}`);
      }
      low = parseValue(a, spec, expression);
      high = parseValue(b, spec, expression);
      if (low > high) throw new CronSyntaxError(expression, `${spec.name} field: range ${rangeText} runs backwards`);
    } else {
      low = parseValue(rangeText, spec, expression);
      // "5/15" means from 5 to the end in steps of 15.
      high = stepText === undefined ? low : spec.max;
    }
    for (let v = low; v <= high; v += step) values.add(spec.name === 'day-of-week' && v === 7 ? 0 : v);
  }
  return { values, restricted: text !== '*' && !text.startsWith('*/') };
}

/** Pure: parse a five-field expression (or a macro such as @daily). Throws CronSyntaxError naming the field. */
export function parseCron(expression: string): CronSchedule {
  const trimmed = expression.trim();
  const expanded = MACROS[trimmed.toLowerCase()] ?? trimmed;
  const parts = expanded.split(/\s+/).filter((p) => p !== '');
  if (parts.length !== 5) {
    throw new CronSyntaxError(
      expression,
      `expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}; for example "0 9 * * 1-5"`,
    );
  }
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = parts.map((part, i) => parseField(part, FIELDS[i]!, expression));
  return {
    expression,
    minutes: minutes!.values,
    hours: hours!.values,
    daysOfMonth: daysOfMonth!.values,
    months: months!.values,
    daysOfWeek: daysOfWeek!.values,
    dayOfMonthRestricted: daysOfMonth!.restricted,
    dayOfWeekRestricted: daysOfWeek!.restricted,
  };
}

function dayMatches(schedule: CronSchedule, date: Date): boolean {
  const dom = schedule.daysOfMonth.has(date.getDate());
  const dow = schedule.daysOfWeek.has(date.getDay());
  if (schedule.dayOfMonthRestricted && schedule.dayOfWeekRestricted) return dom || dow;
  return dom && dow;
}

/**
 * Pure: the first minute strictly after `after` at which the schedule fires, or undefined
 * when there is none within eight years (for example "0 0 31 2 *").
 */
export function nextCronTime(schedule: CronSchedule, after: Date): Date | undefined {
  const t = new Date(after.getTime());
  t.setSeconds(0, 0);
  t.setMinutes(t.getMinutes() + 1);
  const limit = after.getTime() + 8 * 366 * 86_400_000;
  while (t.getTime() <= limit) {
    if (!schedule.months.has(t.getMonth() + 1)) {
      t.setMonth(t.getMonth() + 1, 1);
      t.setHours(0, 0, 0, 0);
      continue;
    }
    if (!dayMatches(schedule, t)) {
      t.setDate(t.getDate() + 1);
      t.setHours(0, 0, 0, 0);
      continue;
    }
    if (!schedule.hours.has(t.getHours())) {
      t.setHours(t.getHours() + 1, 0, 0, 0);
      continue;
    }
    if (!schedule.minutes.has(t.getMinutes())) {
      t.setMinutes(t.getMinutes() + 1, 0, 0);
      continue;
    }
    return t;
  }
  return undefined;
}
