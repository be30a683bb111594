import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../../util/atomic-write.js';

/**
 * Server-private memory of the terminals, kept across restarts in
 * `<state>/private/ttys.json` (host-private): which terminals exist, and what the agent has seen of
 * each (the high-water mark in tmux's own row numbering, so a new server can find it
 * in tmux's history).
 */
const ttyStateSchema = z.object({
  tty: z.int(),
  command: z.string(),
  paneId: z.string(),
  openedAt: z.string(),
  /** The key its last process announces its exit status with (see EXIT_STATUS_OSC). */
  statusKey: z.string().optional(),
  /** Its shell signs its shell marks with statusKey: unsigned marks are forged from the start after a restart too. */
  signsMarks: z.boolean().optional(),
  /** When the command its shell ran began (epoch ms), while one ran: its end is still reported after a restart. */
  commandStartedAt: z.number().optional(),
  cols: z.int(),
  rows: z.int(),
  /** First row not yet seen: tmux history_size + cursor row when the agent last looked. */
  markRow: z.int(),
  /** tmux's history_size then: if it is smaller at re-adoption, tmux dropped old lines. */
  markHistory: z.int(),
  /** A digest of the screen and cursor then: unchanged means nothing new was printed. */
  markDigest: z.string(),
  /** Rows already written to the scrollback file. */
  scrollbackRows: z.int(),
  /**
   * The mark of the latest reply not yet known to have reached the client (markRow and the
   * rest are the last one known delivered): rows between the two may have been shown already.
   */
  shown: z.object({ row: z.int(), history: z.int(), digest: z.string() }).optional(),
  /**
   * The rows just above the cursor then (the last row's number, how many, their digest):
   * where they are now tells how many rows tmux trimmed from its history meanwhile.
   */
  anchor: z.object({ row: z.int(), rows: z.int().min(1), hash: z.string() }).optional(),
  /** Rows gone unseen (trimmed past the history limit) that no reply is known to have told the agent of yet. */
  gone: z.object({ rows: z.int().min(0), maybeSeen: z.int().min(0), atLeast: z.boolean(), limit: z.int().min(1) }).optional(),
  /** The prompt or regex set at open that ends waits on this terminal. */
  until: z.object({ prompt: z.string().optional(), regex: z.string().optional() }).optional(),
});

const seenStateSchema = z.object({
  version: z.literal(1),
  ttys: z.array(ttyStateSchema),
});

export type TtyState = z.infer<typeof ttyStateSchema>;
export type SeenState = z.infer<typeof seenStateSchema>;

export function seenStateFile(privateStateDir: string): string {
  return path.join(privateStateDir, 'ttys.json');
}

/** The saved state; empty when there is none or it cannot be read (then nothing is adopted blindly). */
export async function loadSeenState(privateStateDir: string): Promise<SeenState> {
  try {
    const parsed = seenStateSchema.safeParse(JSON.parse(await readFile(seenStateFile(privateStateDir), 'utf8')));
    if (parsed.success) return parsed.data;
  } catch {
    // missing or torn: start empty
  }
  return { version: 1, ttys: [] };
}

/**
 * Atomic (a killed server leaves the old state or the new), not synced to disk: it guards
 * against the server's death, which the page cache survives, and a crash of the machine ends
 * the terminals it describes. A wait's reply waits for this write (2-10 ms more with a sync).
 */
export async function saveSeenState(privateStateDir: string, ttys: readonly TtyState[]): Promise<void> {
  const state: SeenState = { version: 1, ttys: [...ttys].sort((a, b) => a.tty - b.tty) };
  await writeFileAtomic(seenStateFile(privateStateDir), `${JSON.stringify(state, null, 2)}\n`, 0o600, { durable: false });
}
