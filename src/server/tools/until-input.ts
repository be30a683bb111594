import { z } from 'zod';
import { MAX_PROMPT_CHARS, MAX_REGEX_CHARS } from '../../tty/terminal/until.js';
import { TTY_FIELD_MESSAGE } from './context.js';

const UNTIL_TAKES = 'until takes prompt (the exact prompt, e.g. "(gdb)") or regex (a regular expression)';

const prompt = z
  .string({ error: 'until.prompt must be a string: the exact prompt the program shows, e.g. "(gdb)"' })
  .max(MAX_PROMPT_CHARS, { error: `until.prompt must be at most ${MAX_PROMPT_CHARS} characters` })
  .optional()
  .describe('the exact prompt the program shows when it is ready, e.g. "(gdb)" or "myrepl>"');
const regex = z
  .string({ error: 'until.regex must be a string: a regular expression, e.g. "^Done"' })
  .max(MAX_REGEX_CHARS, { error: `until.regex must be at most ${MAX_REGEX_CHARS} characters` })
  .optional()
  .describe('a JavaScript regular expression (multiline) matched against the new output, or the screen of a full-screen program');

const unknownKeys = (extra: string) => (issue: { code: string; keys?: string[] }) =>
  issue.code === 'unrecognized_keys' ? `Unknown argument${(issue.keys?.length ?? 0) > 1 ? 's' : ''} ${(issue.keys ?? []).map((k) => JSON.stringify(k)).join(', ')} in until: ${UNTIL_TAKES}${extra}.` : undefined;

/** open's `until`: kept for the terminal, every wait on it ends when it matches. */
export const openUntilInput = z
  .strictObject({ prompt, regex }, { error: unknownKeys('') })
  .optional()
  .describe('for a program wait cannot judge (gdb, a custom REPL): every wait on this terminal ends when this prompt or regex shows. One of prompt or regex.');

/** wait's `until`: this wait ends when that terminal matches. */
export const waitUntilInput = z
  .strictObject(
    {
      tty: z.int({ error: TTY_FIELD_MESSAGE }).min(0, { error: TTY_FIELD_MESSAGE }).max(19, { error: TTY_FIELD_MESSAGE }).describe('the terminal to watch'),
      prompt,
      regex,
    },
    { error: unknownKeys(', and tty') },
  )
  .optional()
  .describe('end this wait when terminal tty shows this prompt or regex in its new output (or its program ends), whatever else happens. tty and one of prompt or regex.');
