import { z } from 'zod';
import type { DataPaths } from '../../../config/paths.js';
import { CodedError, isCodedError } from '../../../errors.js';
import { readUntrustedFileText, relativeInside } from '../../../util/untrusted-fs.js';
import { formatZodIssues } from '../../../config/parse.js';
import { writeUntrustedAtomic } from '../../../util/untrusted-write.js';
import { type CronSchedule, nextCronTime, parseCron } from './cron.js';

/**
 * `<data>/system/schedule.json` (`dataPaths().schedule`): when the agent wants to be woken. The
 * agent (with its file tools) or an operator writes it; watch reads it before every wait, below
 * the data directory `root`, never through a link. Every reader and writer goes through this module.
 *
 *   {
 *     "wakes": [
 *       { "at": "2026-11-22T08:00:00Z", "note": "check the build finished" },
 *       { "cron": "0 9 * * 1-5", "note": "morning review of the inbox" }
 *     ]
 *   }
 *
 * `at` is an ISO 8601 time (one-shot: watch removes it from the file once it has woken the
 * agent for it; a time already past when watch reads it fires at once). `cron` is a
 * five-field expression in the host's local time. `note` is handed to the agent as the
 * reason it was woken.
 */

const isoTime = z.string().refine((text) => /^\d{4}-\d{2}-\d{2}T/.test(text) && !Number.isNaN(Date.parse(text)), {
  message: 'expected an ISO 8601 time such as "2026-11-22T08:00:00Z"',
});

const cronExpression = z.string().superRefine((text, ctx) => {
  try {
    parseCron(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

const wakeSchema = z.union([
  z.strictObject({ at: isoTime, note: z.string().default('') }),
  z.strictObject({ cron: cronExpression, note: z.string().default('') }),
]);

export const scheduleSchema = z.strictObject({
  $schema: z.string().optional(),
  wakes: z.array(wakeSchema).default([]),
});

export type ScheduleFile = z.output<typeof scheduleSchema>;
export type Wake = ScheduleFile['wakes'][number];

/** A wake that is due at a time. `index` is its place in the file (to remove a fired one-shot). */
export interface DueWake {
  readonly time: Date;
  readonly note: string;
  readonly kind: 'at' | 'cron';
  readonly spec: string;
  readonly index: number;
}

/**
 * zod's union errors are vague ("Invalid input"); say instead which shape each wake must have,
 * naming the field.
 */
function describeWakeIssue(file: string, input: unknown, error: z.core.$ZodError): string {
  const lines: string[] = [];
  const wakes = (input as { wakes?: unknown } | null)?.wakes;
  for (const issue of error.issues) {
    const [top, index] = issue.path;
    if (top === 'wakes' && typeof index === 'number' && Array.isArray(wakes) && issue.path.length === 2) {
      const wake = wakes[index] as Record<string, unknown> | null;
      const where = `${file}: wakes.${index}`;
      if (wake === null || typeof wake !== 'object') {
        lines.push(`${where}: expected an object such as {"at": "2026-11-22T08:00:00Z", "note": "..."} or {"cron": "0 9 * * *", "note": "..."}`);
        continue;
      }
      if ('at' in wake && 'cron' in wake) {
        lines.push(`${where}: give either "at" (one time) or "cron" (repeating), not both`);
        continue;
      }
      if (!('at' in wake) && !('cron' in wake)) {
        lines.push(`${where}: needs "at" (an ISO 8601 time, fires once) or "cron" (a five-field expression such as "0 9 * * 1-5")`);
        continue;
      }
      const one = wakeSchema.options[('cron' in wake ? 1 : 0) as 0 | 1].safeParse(wake);
      if (!one.success) {
        const issues = one.error.issues.map((i) => ({ ...i, path: ['wakes', index, ...i.path] }));
        lines.push(formatZodIssues(file, new z.ZodError(issues)));
        continue;
      }
    }
    lines.push(formatZodIssues(file, new z.ZodError([issue])));
  }
  return lines.join('\n');
}

/** Pure: validate a parsed schedule.json. Errors name the file and the field. */
export function parseSchedule(input: unknown, file = 'schedule.json'): ScheduleFile {
  const result = scheduleSchema.safeParse(input ?? {});
  if (!result.success) {
    throw new CodedError('CONFIG_INVALID', `${describeWakeIssue(file, input, result.error)}\nFix the file; until then no scheduled wake fires.`, {
      details: { file },
    });
  }
  return result.data;
}

export interface LoadedSchedule {
  readonly schedule: ScheduleFile;
  /** The exact text read, to rewrite the file only if nobody changed it meanwhile. */
  readonly text: string | undefined;
}

export type ScheduleFilePaths = Pick<DataPaths, 'root' | 'schedule'>;

/** Read schedule.json; a missing file is an empty schedule. Bad JSON or fields: CONFIG_INVALID. */
export async function loadSchedule(paths: ScheduleFilePaths): Promise<LoadedSchedule> {
  const file = paths.schedule;
  let text: string;
  try {
    // Nothing below the data directory is trusted (util/untrusted-fs.ts).
    const read = await readUntrustedFileText(paths.root, file);
    if (read === undefined) return { schedule: { wakes: [] }, text: undefined };
    text = read;
  } catch (error) {
    if (isCodedError(error)) throw error;
    throw new CodedError('CONFIG_INVALID', `${file}: cannot be read: ${(error as Error).message}`, { cause: error });
  }
  if (text.trim() === '') return { schedule: { wakes: [] }, text };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new CodedError('CONFIG_INVALID', `${file}: is not valid JSON (${(error as Error).message}). Fix the file; until then no scheduled wake fires.`, {
      cause: error,
      details: { file },
    });
  }
  return { schedule: parseSchedule(json, file), text };
}

/**
 * Pure: the earliest wake after `after` (for cron) or at any time (a one-shot in the past is
 * due now). Undefined when nothing is scheduled.
 */
export function nextWake(schedule: ScheduleFile, after: Date): DueWake | undefined {
  let best: DueWake | undefined;
  schedule.wakes.forEach((wake, index) => {
    let candidate: DueWake | undefined;
    if ('at' in wake) {
      candidate = { time: new Date(wake.at), note: wake.note, kind: 'at', spec: wake.at, index };
    } else {
      const time = nextCronTime(parseCron(wake.cron) satisfies CronSchedule, after);
      if (time) candidate = { time, note: wake.note, kind: 'cron', spec: wake.cron, index };
    }
    if (candidate && (!best || candidate.time.getTime() < best.time.getTime())) best = candidate;
  });
  return best;
}

/**
 * Remove a fired one-shot from schedule.json, but only if the file still holds the text we
 * read (the agent may have rewritten it meanwhile; then its version wins and we leave it).
 * Returns whether the file was changed.
 */
export async function removeFiredWake(paths: ScheduleFilePaths, loaded: LoadedSchedule, wake: DueWake): Promise<boolean> {
  if (wake.kind !== 'at' || loaded.text === undefined) return false;
  // schedule.json is the agent's: read and replaced without following a link (untrusted-fs.ts).
  const { root, schedule: file } = paths;
  const current = await readUntrustedFileText(root, file).catch(() => undefined);
  if (current !== loaded.text) return false;
  const raw = JSON.parse(loaded.text) as { wakes?: unknown[] };
  if (!Array.isArray(raw.wakes)) return false;
  raw.wakes.splice(wake.index, 1);
  await writeUntrustedAtomic(root, relativeInside(root, file), JSON.stringify(raw, null, 2) + '\n');
  return true;
}
