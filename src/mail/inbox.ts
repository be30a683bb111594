import path from 'node:path';
import { z } from 'zod';
import { formatZodIssues } from '../config/parse.js';
import { isCodedError } from '../errors.js';
import { listUntrusted, listUntrustedNames, readUntrustedText, relativeInside } from '../util/untrusted-fs.js';
import { makeUntrustedDirs, moveUntrusted } from '../util/untrusted-write.js';
import { appendEvent } from '../observe/events/event-log.js';
import { watchFolder } from './folder-watch.js';
import { oneLine } from './framing.js';

/**
 * An instance's `<data>/inbox/`: notes the agent's own container left for it, one file each.
 *
 * The container writes the whole data directory, so anything in it can have written a file
 * here: it is the agent's own note, whatever it says about itself. A tick gets it as such
 * (mail-format.ts `formatInboxNote`), never as a message from the operator or another agent,
 * which travel through the post office (src/mail) where the host stamps the sender.
 *
 * A `.json` file holds `{"text": "..."}` (the fields of the former message format, `from`, `sent`,
 * `id`, `reply_to`, are accepted and ignored); any other file is a plain-text note. Files
 * starting with "." are never read (write a temp name, then rename). A note the model has had
 * moves to `inbox/done/`; a `.json` file that does not match, or a note over `mail.max_bytes`,
 * to `inbox/invalid/` with the reason logged, so nothing is lost.
 *
 * The host lists, reads and moves only regular files, through folders opened without following
 * links (util/untrusted-*.ts), so a link planted as a note, as `done/` or `invalid/` never
 * makes the host read or move anything outside it.
 */

const noteSchema = z.strictObject({
  text: z.string().min(1).describe('the note itself'),
  // The former message format: accepted, and ignored (the kernel says who wrote it).
  from: z.string().optional(),
  sent: z.string().optional(),
  id: z.string().optional(),
  reply_to: z.string().optional(),
});

export interface InboxNote {
  /** The file's name in inbox/. */
  readonly name: string;
  readonly text: string;
  /** The file it came from (in inbox/). */
  readonly file: string;
}

export interface InboxPaths {
  readonly inbox: string;
  readonly inboxDone: string;
  /** The instance's event log: a delivered note is logged there. */
  readonly events?: string;
}

/** The data directory: the trusted root the untrusted inbox paths hang from. */
function dataRoot(paths: InboxPaths): string {
  return path.dirname(paths.inbox);
}

const INBOX = 'inbox';

export type ReadResult = { ok: true; note: InboxNote } | { ok: false; file: string; reason: string };

/** Pure: turn one file's content into a note. */
export function parseNoteFile(file: string, content: string): ReadResult {
  const name = path.basename(file);
  if (!name.endsWith('.json')) {
    if (content.trim() === '') return { ok: false, file, reason: 'the file is empty' };
    return { ok: true, note: { name, text: content.replace(/\n+$/, ''), file } };
  }
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch (error) {
    return { ok: false, file, reason: `not valid JSON (${(error as Error).message})` };
  }
  const result = noteSchema.safeParse(json);
  if (!result.success) return { ok: false, file, reason: formatZodIssues(name, result.error) };
  return { ok: true, note: { name, text: result.data.text, file } };
}

/** Create `<data>/inbox/` when missing (never through a link). */
export async function ensureInbox(paths: InboxPaths): Promise<void> {
  await makeUntrustedDirs(dataRoot(paths), INBOX);
}

const isNoteName = (name: string): boolean => !name.startsWith('.') && !name.endsWith('~');

/** How many files wait in the inbox (names only: a folder of thousands costs one readdir). */
export async function countPending(paths: InboxPaths): Promise<number> {
  const names = (await listUntrustedNames(dataRoot(paths), INBOX)) ?? [];
  return names.filter((n) => isNoteName(n) && n !== 'done' && n !== 'invalid').length;
}

/** The names of waiting note files (regular files only: a link or FIFO is never opened), oldest name first. */
export async function listPending(paths: InboxPaths, options: { limit?: number; skip?: ReadonlySet<string> } = {}): Promise<string[]> {
  const entries = await listUntrusted(dataRoot(paths), INBOX, {
    accept: (name) => isNoteName(name) && !options.skip?.has(name),
    kind: 'file',
    ...(options.limit === undefined ? {} : { limit: options.limit }),
  });
  return (entries ?? []).map((e) => e.name);
}

export interface ReadPendingOptions {
  /** Read at most this many (the rest wait). */
  readonly limit?: number;
  /** Names to pass over (handed already). */
  readonly skip?: ReadonlySet<string>;
  /** Larger notes are moved to inbox/invalid/ (default 1 MiB). */
  readonly maxBytes?: number;
}

/** Read waiting notes. Bad files are moved to inbox/invalid/ and reported through `onInvalid`. */
export async function readPending(paths: InboxPaths, onInvalid: (file: string, reason: string) => void, options: ReadPendingOptions = {}): Promise<InboxNote[]> {
  const notes: InboxNote[] = [];
  for (const name of await listPending(paths, options)) {
    const full = path.join(paths.inbox, name);
    let result: ReadResult;
    try {
      // A file swapped for a link or FIFO since the listing is refused; a huge one is not read whole.
      const read = await readUntrustedText(dataRoot(paths), `${INBOX}/${name}`, options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes });
      if (read === undefined) continue;
      result = parseNoteFile(full, read);
    } catch (error) {
      if (!isCodedError(error, 'UNTRUSTED_FILE')) throw error;
      if (!/byte limit/.test(error.message)) {
        onInvalid(full, error.message);
        continue;
      }
      result = { ok: false, file: full, reason: error.message };
    }
    if (result.ok) {
      notes.push(result.note);
    } else {
      const moved = await moveUntrusted(dataRoot(paths), `${INBOX}/${name}`, `${INBOX}/invalid/${name}`).then(
        () => undefined,
        (error: unknown) => (isCodedError(error, 'UNTRUSTED_FILE') ? ` (left in the inbox: ${error.message})` : ` (left in the inbox: ${String(error)})`),
      );
      onInvalid(moved === undefined ? path.join(paths.inbox, 'invalid', name) : full, result.reason + (moved ?? ''));
    }
  }
  return notes;
}

/**
 * Move a note the model has had to inbox/done/. Throws UNTRUSTED_FILE when the agent planted a
 * link (or a file) at `done/` or swapped the note: then nothing is moved, and the caller logs it.
 */
export async function markDelivered(paths: InboxPaths, note: InboxNote, tick?: number): Promise<void> {
  const root = dataRoot(paths);
  const rel = relativeInside(root, note.file);
  await moveUntrusted(root, rel, `${relativeInside(root, paths.inboxDone)}/${path.basename(note.file)}`);
  if (paths.events) await appendEvent(paths.events, { type: 'message.delivered', id: oneLine(note.name, 120), from: 'self', ...(tick === undefined ? {} : { tick }) });
}

/**
 * Call `onChange` when the inbox may have changed (folder-watch.ts: a watch on the folder
 * pinned without following links, plus a poll).
 */
export function watchInbox(paths: InboxPaths, onChange: () => void, pollMs = 2000): { close(): void } {
  return watchFolder(dataRoot(paths), INBOX, onChange, pollMs);
}
