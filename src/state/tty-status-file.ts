import { z } from 'zod';

/**
 * `<data>/tmp/sessions/tty_N/status` (under `dataPaths().tty(n)`): what one terminal is doing,
 * rewritten by the terminal files (observe/tty-files.ts), read by `agent-kernel ls` and hooks.
 */
export const ttyStatusFileSchema = z.looseObject({
  tty: z.int().min(0),
  command: z.string(),
  program: z.string(),
  alive: z.boolean(),
  exitCode: z.int().optional(),
  lastActivity: z.string(),
  /** The high-water mark: the agent has seen everything before this row (absolute, tmux's numbering). */
  highWaterMark: z.number(),
  unseen: z.boolean(),
  cols: z.int(),
  rows: z.int(),
  fullScreen: z.boolean(),
});

export type TtyStatusFile = z.input<typeof ttyStatusFileSchema>;

export const TTY_STATUS_FILE = 'status';

/** Pure: a status file's JSON, or undefined when it does not match (a torn or foreign file). */
export function parseTtyStatusFile(input: unknown): z.output<typeof ttyStatusFileSchema> | undefined {
  const result = ttyStatusFileSchema.safeParse(input);
  return result.success ? result.data : undefined;
}
