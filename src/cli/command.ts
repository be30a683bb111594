/** One sub-command of a bin: its own argument parsing, returns the exit code. */
export interface Command {
  name: string;
  summary: string;
  usage: string;
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
