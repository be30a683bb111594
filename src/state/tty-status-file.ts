import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../util/atomic-write.js';
import { readUntrustedRange } from '../util/untrusted-fs.js';

/**
 * `<state>/sessions/tty_N/status` (in `instancePaths().tty(n)`; host-private, shown read-only to
 * the container at `<data>/tmp/sessions/tty_N/status`): what one terminal is doing. Rewritten by
 * the terminal files (observe/tty-files.ts, through writeTtyStatusFile), read by `agent-kernel ls`,
 * the web view and hooks (readTtyStatusFile). Every reader and writer goes through this module.
 */
export const ttyStatusFileSchema = z.looseObject({
  tty: z.int().min(0),
  command: z.string(),
  program: z.string(),
  alive: z.boolean(),
  /** Its shell runs a command now (its marks say so); absent for a terminal without shell marks. */
  commandRunning: z.boolean().optional(),
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
export type TtyStatus = z.output<typeof ttyStatusFileSchema>;

/** The file's name in a terminal's folder (the folders' cleanup lists it too). */
export const TTY_STATUS_FILE = 'status';

/** A status file is a few hundred bytes; more is not one. */
const STATUS_MAX_BYTES = 64 * 1024;

/** Pure: a status file's JSON, or undefined when it does not match (a torn or foreign file). */
export function parseTtyStatusFile(input: unknown): TtyStatus | undefined {
  const result = ttyStatusFileSchema.safeParse(input);
  return result.success ? result.data : undefined;
}

/**
 * The status in the terminal folder `ttyDir`; undefined when there is none or it is not a
 * status file. Read without following a link and capped: the folder is shown to the container.
 */
export async function readTtyStatusFile(ttyDir: string): Promise<TtyStatus | undefined> {
  const read = await readUntrustedRange(ttyDir, TTY_STATUS_FILE, { maxBytes: STATUS_MAX_BYTES }).catch(() => undefined);
  if (!read) return undefined;
  try {
    return parseTtyStatusFile(JSON.parse(read.data.toString('utf8')));
  } catch {
    return undefined;
  }
}

/** Rewrite the status in the terminal folder `ttyDir`, atomically. */
export async function writeTtyStatusFile(ttyDir: string, status: TtyStatusFile, options?: { durable?: boolean }): Promise<void> {
  await writeFileAtomic(path.join(ttyDir, TTY_STATUS_FILE), `${JSON.stringify(status, null, 2)}\n`, undefined, options);
}
