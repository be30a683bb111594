import vm from 'node:vm';
import { CodedError } from '../../errors.js';
import type { UntilSpec } from '../api/types.js';
import type { Tty } from './tty.js';


export const MAX_PROMPT_CHARS = 200;
export const MAX_REGEX_CHARS = 1000;
/** The new output a regex is run on: its last characters (the match is wanted near the end). */
const MATCHED_TEXT_CHARS = 16_384;
/** A regex slower than this on the terminal's text is given up (an agent's pattern must not stall the server). */
const REGEX_TIMEOUT_MS = 100;
const SHOWN_MATCH_CHARS = 200;

export type UntilPattern = { kind: 'prompt'; prompt: string } | { kind: 'regex'; source: string; regex: RegExp };

/** A checked pattern, or a USAGE error naming the field (`until` for wait, `until` for open). */
export function compileUntil(spec: UntilSpec, field = 'until'): UntilPattern {
  const hasPrompt = spec.prompt !== undefined;
  const hasRegex = spec.regex !== undefined;
  if (hasPrompt === hasRegex) {
    throw new CodedError('USAGE', `${field} takes exactly one of prompt (the program's prompt, e.g. "(gdb)") or regex (a regular expression); it got ${hasPrompt ? 'both' : 'neither'}.`);
  }
  if (hasPrompt) {
    const prompt = (spec.prompt ?? '').trim();
    if (prompt === '' || prompt.length > MAX_PROMPT_CHARS) {
      throw new CodedError('USAGE', `${field}.prompt must be the program's prompt, 1 to ${MAX_PROMPT_CHARS} characters (spaces at its ends do not count), e.g. "(gdb)".`);
    }
    return { kind: 'prompt', prompt };
  }
  const source = spec.regex ?? '';
  if (source === '' || source.length > MAX_REGEX_CHARS) {
    throw new CodedError('USAGE', `${field}.regex must be a regular expression of 1 to ${MAX_REGEX_CHARS} characters, e.g. "^done$" or "\\\\(Pdb\\\\) $".`);
  }
  try {
    return { kind: 'regex', source, regex: new RegExp(source, 'm') };
  } catch (error) {
    throw new CodedError('USAGE', `${field}.regex is not a valid regular expression (${(error as Error).message}). Fix it, or pass prompt with the exact prompt text instead.`);
  }
}

const sandboxContext = vm.createContext({});
const execScript = new vm.Script('re.exec(text)');

/** `regex.exec(text)` with a time limit: the pattern is the agent's, the text the container's. */
function execLimited(regex: RegExp, text: string): RegExpExecArray | null {
  sandboxContext.re = regex;
  sandboxContext.text = text;
  try {
    return execScript.runInContext(sandboxContext, { timeout: REGEX_TIMEOUT_MS }) as RegExpExecArray | null;
  } catch {
    throw new CodedError('USAGE', `The regex /${regex.source}/ took over ${REGEX_TIMEOUT_MS} ms on the terminal's output and was given up. Use a simpler pattern (no nested repetition such as (a+)+), or prompt with the exact prompt text.`);
  } finally {
    sandboxContext.re = undefined;
    sandboxContext.text = undefined;
  }
}

/**
 * Does the terminal show the pattern in what is new since the agent last looked (or, with
 * a pending type, since the keys went out)? Returns what matched, or undefined.
 */
export function matchUntil(pattern: UntilPattern, tty: Tty): string | undefined {
  const emulator = tty.emulator;
  const pending = tty.actions.pending;
  // The program has not printed since the keys went out: what is on screen is from before.
  if (pending && emulator.lastOutputAt < pending.at) return undefined;
  if (!tty.hasUnseen()) return undefined;
  if (pattern.kind === 'prompt') {
    const row = emulator.readRows(emulator.cursorAbs, emulator.cursorAbs + 1)[0]?.text ?? '';
    const before = row.slice(0, Math.max(0, emulator.cursorX)).trimEnd();
    return before.endsWith(pattern.prompt) ? shown(before) : undefined;
  }
  const text = emulator.alternateScreen ? emulator.screenText() : newText(tty);
  const match = execLimited(pattern.regex, text.slice(-MATCHED_TEXT_CHARS));
  return match ? shown(match[0]) : undefined;
}

/** The lines since the agent's mark that the emulator still holds, without the echo of what was typed. */
function newText(tty: Tty): string {
  return tty.tracker.heldOutput(tty.emulator).join('\n');
}

function shown(text: string): string {
  const flat = text.replace(/\s+$/, '');
  return flat.length > SHOWN_MATCH_CHARS ? `${flat.slice(0, SHOWN_MATCH_CHARS)}…` : flat;
}
