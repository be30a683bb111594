import { Cron } from 'croner';

/**
 * Cron expressions, validated here field by field and evaluated by croner (daylight-saving
 * changes included: a job in a skipped hour runs at the change; in a repeated hour a fixed-time
 * job runs once and an interval job runs in both). Five fields (minute hour day-of-month month
 * day-of-week), each a `*`, a number, a range `a-b`, a list `a,b,c`, or any of those with a step (`*\/15`, `1-30/2`).
 * Months and weekdays also take names (JAN..DEC, SUN..SAT); weekday 7 is Sunday too.
 * Times are the host's local time, as with cron.
 */

export interface CronSchedule {
  readonly expression: string;
  /** croner evaluates; our parser only validates, so errors name the field in our words. */
  readonly evaluator: Cron;
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

function validateField(text: string, spec: FieldSpec, expression: string): void {
  for (const part of text.split(',')) {
    if (part === '') throw new CronSyntaxError(expression, `${spec.name} field: empty list item in ${JSON.stringify(text)}`);
    const [rangeText, stepText, extra] = part.split('/');
    if (extra !== undefined || rangeText === undefined || rangeText === '') {
      throw new CronSyntaxError(expression, `${spec.name} field: cannot read ${JSON.stringify(part)}`);
    }
    if (stepText !== undefined && (!/^\d+$/.test(stepText) || Number(stepText) === 0)) {
      throw new CronSyntaxError(expression, `${spec.name} field: step ${JSON.stringify(stepText)} must be a positive number`);
    }
    if (rangeText === '*') continue;
    if (rangeText.includes('-')) {
      const [a, b, more] = rangeText.split('-');
      if (a === undefined || b === undefined || more !== undefined || a === '' || b === '') {
        throw new CronSyntaxError(expression, `${spec.name} field: cannot read range ${JSON.stringify(rangeText)}`);
      }
      if (parseValue(a, spec, expression) > parseValue(b, spec, expression)) {
        throw new CronSyntaxError(expression, `${spec.name} field: range ${rangeText} runs backwards`);
      }
    } else {
      parseValue(rangeText, spec, expression);
    }
  }
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
  parts.forEach((part, i) => validateField(part, FIELDS[i]!, expression));
  // sloppyRanges: "5/15" (from 5 to the end in steps of 15) is classic cron syntax.
  try {
    return { expression, evaluator: new Cron(parts.join(' '), { paused: true, mode: '5-part', sloppyRanges: true }) };
  } catch (error) {
    throw new CronSyntaxError(expression, (error as Error).message.replace(/^CronPattern: /, ''));
  }
}

/**
 * Pure: the first minute strictly after `after` at which the schedule fires, in the host's
 * local time, or undefined when there is none (for example "0 0 31 2 *").
 */
export function nextCronTime(schedule: CronSchedule, after: Date): Date | undefined {
  return schedule.evaluator.nextRun(after) ?? undefined;
}
