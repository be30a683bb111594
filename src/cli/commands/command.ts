import { escapeControls } from '../../util/control-chars.js';

/** One sub-command of a bin: its own argument parsing, returns the exit code. */
export interface Command {
  name: string;
  summary: string;
  usage: string;
  /** Each option as shown in `--help`: the flag with its value, and what it does. */
  options?: readonly (readonly [string, string])[];
  /** Command lines a person would type, each with what it does after a `#`. */
  examples: readonly string[];
  run(args: string[]): Promise<number>;
}

/** Exit codes shared by both bins (seed 001's doctor convention). */
export const EXIT = {
  OK: 0,
  /** A failure that is not one of the others. */
  FAILED: 1,
  /** Bad usage or a bad config file. */
  USAGE: 2,
  /** Set-up not ready (no engine, no image, not logged in...). */
  NOT_READY: 3,
  /** A check failed (doctor). */
  CHECK_FAILED: 4,
} as const;

/**
 * What a command prints for a person: through here, never process.stdout.write, because it
 * carries text the agent wrote (a paused reason, a command, a config key) and a raw escape
 * sequence there would act on the operator's terminal (title, clipboard, cursor).
 */
export function out(text: string): boolean {
  return process.stdout.write(escapeControls(text));
}

/** out() for stderr. */
export function err(text: string): boolean {
  return process.stderr.write(escapeControls(text));
}

/**
 * Pure: a progress line from a tool that redraws with carriage returns (apt, dpkg: `\r(Reading
 * database ... 5%`) as a terminal would leave it: the text after the last one.
 */
export function finalText(line: string): string {
  const parts = line.split('\r').filter((part) => part.trim() !== '');
  return parts.at(-1) ?? '';
}
