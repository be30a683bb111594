import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { CodedError, isCodedError } from '../errors.js';
import { readUntrustedFileText } from '../util/untrusted-fs.js';

/** "1500ms", "30s", "10m", "2h", "1d" → milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) throw new Error(`expected a duration such as "30s", "10m" or "2h", got ${JSON.stringify(text)}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 'ms' | 's' | 'm' | 'h' | 'd'];
  return Math.round(Number(match[1]) * unit);
}

/** One line per problem: `<file>: <field>: <what was expected>`. */
export function formatZodIssues(file: string, error: z.core.$ZodError): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
      return `${file}: ${field}: ${issue.message}`;
    })
    .join('\n');
}

/**
 * For a file parsed once or twice per process: zod compiles a fast path for each object schema
 * on its first parse (about 60 ms for the config's at every start-up), which only repeated parses repay.
 */
export const PARSED_ONCE = { jitless: true } as const;

/** Validate `input` against `schema`; a failure names the file and every bad field. */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown, file: string): z.output<S> {
  const result = schema.safeParse(input, PARSED_ONCE);
  if (!result.success) {
    throw new CodedError('CONFIG_INVALID', `${formatZodIssues(file, result.error)}\nFix the file and try again.`, {
      details: { file },
    });
  }
  return result.data;
}

/**
 * Read a JSON file. A missing file gives `undefined` (the caller picks defaults);
 * a file that is not JSON is a CONFIG_INVALID error that says where it broke.
 */
export async function readJsonFile(file: string, untrustedRoot?: string): Promise<unknown> {
  let text: string;
  try {
    // Inside the data directory: no link followed, no FIFO, no huge file (util/untrusted-fs.ts).
    const read = untrustedRoot === undefined ? await readFile(file, 'utf8') : await readUntrustedFileText(untrustedRoot, file);
    if (read === undefined) return undefined;
    text = read;
  } catch (error) {
    if (isCodedError(error)) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CodedError('CONFIG_INVALID', `${file}: cannot be read: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CodedError(
      'CONFIG_INVALID',
      `${file}: is not valid JSON (${(error as Error).message}). Fix the file and try again.`,
      { cause: error, details: { file } },
    );
  }
}
