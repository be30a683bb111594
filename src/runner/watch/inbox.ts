import { randomBytes } from 'node:crypto';
import { type FSWatcher, watch as fsWatch } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { formatZodIssues } from '../../config/parse.js';
import { KernelError, isKernelError } from '../../errors.js';
import { openUntrustedDir } from '../../util/untrusted-dir.js';
import { listUntrusted, readUntrustedText, relativeInside } from '../../util/untrusted-fs.js';
import { makeUntrustedDirs, moveUntrusted, writeUntrustedNew } from '../../util/untrusted-write.js';
import { appendEvent } from '../../observe/events/event-log.js';

/**
 * An instance's inbox: `<data>/inbox/`, one file a message.
 *
 * File format (what `kernel-runner send` writes, and what any other process or agent may
 * write the same way): a JSON object in a file named `<anything>.json`,
 *
 *   { "from": "alice", "text": "the build is green", "sent": "2026-11-22T08:00:00.000Z",
 *     "id": "m-...", "reply_to": "m-..." }
 *
 * `text` is required; `from` (who sent it: an instance name, "operator", a hook...) defaults to
 * "unknown"; `sent` to the file's arrival; `id` to the file name; `reply_to` is optional
 * (the id of the message this answers). A file with another extension is a plain-text
 * message whose whole content is `text`.
 *
 * Writers must write atomically: a temp name starting with "." in the same folder, then
 * rename. Files starting with "." are never read. A delivered message is moved to
 * `inbox/done/`; a .json file that does not match the format is moved to `inbox/invalid/`
 * with the reason logged, so nothing is lost.
 *
 * The inbox is the agent's to write: the host lists, reads and moves only regular files,
 * through folders opened without following links (util/untrusted-*.ts), so a link planted as
 * a message, as `done/` or `invalid/` never makes the host read or move anything outside it.
 */

export const inboxMessageSchema = z.strictObject({
  from: z.string().min(1).default('unknown').describe('who sent it'),
  text: z.string().min(1).describe('the message itself'),
  sent: z.string().optional().describe('ISO 8601 time it was sent'),
  id: z.string().min(1).optional(),
  reply_to: z.string().min(1).optional().describe('the id of the message this one answers'),
});

export interface InboxMessage {
  readonly id: string;
  readonly from: string;
  readonly text: string;
  readonly sent: string;
  readonly replyTo?: string;
  /** The file it came from (in inbox/). */
  readonly file: string;
}

export interface InboxPaths {
  readonly inbox: string;
  readonly inboxDone: string;
  /** The instance's event log: a delivered message is logged there. */
  readonly events?: string;
}

/** The data directory: the trusted root the untrusted inbox paths hang from. */
function dataRoot(paths: InboxPaths): string {
  return path.dirname(paths.inbox);
}

const INBOX = 'inbox';

const SENDER_PATTERN = /^[A-Za-z0-9_.@:-]{1,64}$/;

function newId(now: Date): string {
  return `m-${now.toISOString().replace(/[-:.]/g, '').replace('T', '-').replace('Z', '')}-${randomBytes(3).toString('hex')}`;
}

/** Drop a message in an inbox, atomically (temp name starting with ".", then rename). Returns the message id. */
export async function sendMessage(
  paths: InboxPaths,
  message: { text: string; from?: string; replyTo?: string },
  now: Date = new Date(),
): Promise<{ id: string; file: string }> {
  if (message.text.trim() === '') throw new KernelError('USAGE', 'The message is empty: give the text as an argument or on stdin.');
  const from = message.from ?? 'operator';
  if (!SENDER_PATTERN.test(from)) {
    throw new KernelError('USAGE', `Sender ${JSON.stringify(from)} is not allowed: use 1-64 of A-Z a-z 0-9 _ . @ : -.`);
  }
  const id = newId(now);
  const body = { from, text: message.text, sent: now.toISOString(), id, ...(message.replyTo ? { reply_to: message.replyTo } : {}) };
  const root = dataRoot(paths);
  const temp = `${INBOX}/.${id}.tmp`;
  if (!(await writeUntrustedNew(root, temp, JSON.stringify(body, null, 2) + '\n', 0o600))) {
    throw new KernelError('USAGE', `${path.join(root, temp)} is taken: send the message again.`);
  }
  await moveUntrusted(root, temp, `${INBOX}/${id}.json`);
  return { id, file: path.join(paths.inbox, `${id}.json`) };
}

export type ReadResult = { ok: true; message: InboxMessage } | { ok: false; file: string; reason: string };

/** Pure: turn one file's content into a message. */
export function parseMessageFile(fileName: string, content: string, arrived: Date): ReadResult {
  const file = fileName;
  const base = path.basename(fileName).replace(/\.[^.]*$/, '');
  if (!fileName.endsWith('.json')) {
    if (content.trim() === '') return { ok: false, file, reason: 'the file is empty' };
    return { ok: true, message: { id: base, from: 'unknown', text: content.replace(/\n+$/, ''), sent: arrived.toISOString(), file } };
  }
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch (error) {
    return { ok: false, file, reason: `not valid JSON (${(error as Error).message})` };
  }
  const result = inboxMessageSchema.safeParse(json);
  if (!result.success) return { ok: false, file, reason: formatZodIssues(path.basename(fileName), result.error) };
  const m = result.data;
  return {
    ok: true,
    message: { id: m.id ?? base, from: m.from, text: m.text, sent: m.sent ?? arrived.toISOString(), ...(m.reply_to ? { replyTo: m.reply_to } : {}), file },
  };
}

/** Create `<data>/inbox/` when missing (never through a link). */
export async function ensureInbox(paths: InboxPaths): Promise<void> {
  await makeUntrustedDirs(dataRoot(paths), INBOX);
}

/** The names of waiting message files, oldest name first (ids start with their time). */
export async function listPending(paths: InboxPaths): Promise<string[]> {
  const entries = (await listUntrusted(dataRoot(paths), INBOX)) ?? [];
  return entries
    .filter((e) => e.kind === 'file' && !e.name.startsWith('.') && !e.name.endsWith('~'))
    .map((e) => e.name)
    .sort();
}

/** Read every waiting message. Bad files are moved to inbox/invalid/ and reported through `onInvalid`. */
export async function readPending(paths: InboxPaths, onInvalid: (file: string, reason: string) => void): Promise<InboxMessage[]> {
  const messages: InboxMessage[] = [];
  for (const name of await listPending(paths)) {
    const full = path.join(paths.inbox, name);
    let content: string;
    try {
      // A link, FIFO or huge file planted in the inbox is never followed or read whole.
      const read = await readUntrustedText(dataRoot(paths), `${INBOX}/${name}`);
      if (read === undefined) continue;
      content = read;
    } catch (error) {
      if (isKernelError(error, 'UNTRUSTED_FILE')) {
        onInvalid(full, error.message);
        continue;
      }
      throw error;
    }
    const result = parseMessageFile(full, content, new Date());
    if (result.ok) {
      messages.push(result.message);
    } else {
      const moved = await moveUntrusted(dataRoot(paths), `${INBOX}/${name}`, `${INBOX}/invalid/${name}`).then(
        () => undefined,
        (error: unknown) => (isKernelError(error, 'UNTRUSTED_FILE') ? ` (left in the inbox: ${error.message})` : ` (left in the inbox: ${String(error)})`),
      );
      onInvalid(moved === undefined ? path.join(paths.inbox, 'invalid', name) : full, result.reason + (moved ?? ''));
    }
  }
  return messages;
}

/**
 * Move a delivered message to inbox/done/. Throws UNTRUSTED_FILE when the agent planted a link
 * (or a file) at `done/` or swapped the message: then nothing is moved, and the caller logs it.
 */
export async function markDelivered(paths: InboxPaths, message: InboxMessage): Promise<void> {
  const root = dataRoot(paths);
  const rel = relativeInside(root, message.file);
  await moveUntrusted(root, rel, `${relativeInside(root, paths.inboxDone)}/${path.basename(message.file)}`);
  if (paths.events) await appendEvent(paths.events, { type: 'message.delivered', id: message.id, ...(message.from ? { from: message.from } : {}) });
}

/** Pure: how a message reads to the agent. */
export function formatMessage(message: InboxMessage): string {
  const reply = message.replyTo ? `, in reply to ${message.replyTo}` : '';
  return `Message ${message.id} from ${message.from} (sent ${message.sent}${reply}):\n${message.text}`;
}

/**
 * Call `onChange` when the inbox may have changed: fs.watch for speed, plus a poll for
 * filesystems where watching misses events (network mounts, bind mounts from containers).
 * The watch is set on the inbox folder pinned without following links (the container may
 * have made `inbox` a link to a busy host folder); a folder swapped in later is seen by the poll.
 */
export function watchInbox(paths: InboxPaths, onChange: () => void, pollMs = 2000): { close(): void } {
  let watcher: FSWatcher | undefined;
  let starting = false;
  let closed = false;
  const startWatcher = async () => {
    if (watcher || starting) return;
    starting = true;
    const dir = await openUntrustedDir(dataRoot(paths), INBOX).catch(() => undefined);
    try {
      if (!dir || closed) return;
      watcher = fsWatch(dir.self, { persistent: false }, () => onChange());
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      watcher = undefined;
    } finally {
      starting = false;
      await dir?.close();
    }
  };
  void startWatcher();
  const timer = setInterval(() => {
    // The inbox may be created (or recreated) after watch started.
    void startWatcher();
    onChange();
  }, pollMs);
  timer.unref();
  return {
    close() {
      closed = true;
      clearInterval(timer);
      watcher?.close();
    },
  };
}
