import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { InstancePaths } from '../../config/paths.js';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { MESSAGE_ID, type MailRecord, parseMailRecord } from './mail-record.js';

/**
 * The host-private side of an instance's mail (paths.ts `mail`), out of the container's reach:
 * `queue/` holds what its model has not had yet, `delivered/` what it had, `sent/` what it
 * sent. One JSON file a message, named by its id, written atomically (temp file, then rename),
 * so the sending process and the recipient's watch never see half a message.
 */

export type MailPaths = InstancePaths['mail'];

/** Records kept in `delivered/` and `sent/` (the oldest go first; the event log keeps the history). */
export const KEEP_RECORDS = 2000;

function fileOf(dir: string, id: string): string {
  if (!MESSAGE_ID.test(id)) throw new Error(`not a message id: ${JSON.stringify(id)}`);
  return path.join(dir, `${id}.json`);
}

async function write(dir: string, record: MailRecord): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(fileOf(dir, record.id), JSON.stringify(record, null, 2) + '\n', 0o600);
}

async function read(dir: string, id: string): Promise<MailRecord | undefined> {
  const text = await readFile(fileOf(dir, id), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : parseMailRecord(text);
}

/** The ids in a folder, oldest first (ids sort by time). */
export async function listIds(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .filter((n) => n.endsWith('.json') && MESSAGE_ID.test(n.slice(0, -5)))
    .map((n) => n.slice(0, -5))
    .sort();
}

/** Up to `limit` records of a folder, oldest first, and how many there are in all. */
export async function readRecords(dir: string, limit = Infinity): Promise<{ records: MailRecord[]; total: number }> {
  const ids = await listIds(dir);
  const records: MailRecord[] = [];
  for (const id of ids) {
    if (records.length >= limit) break;
    const record = await read(dir, id);
    if (record) records.push(record);
  }
  return { records, total: ids.length };
}

/** Put a message in an instance's queue: its watch hands it to the next tick (or the running one). */
export async function enqueue(paths: MailPaths, record: MailRecord): Promise<void> {
  await write(paths.queue, record);
}

/** Keep a copy of what an instance sent. */
export async function recordSent(paths: MailPaths, record: MailRecord): Promise<void> {
  await write(paths.sent, record);
  await prune(paths.sent, KEEP_RECORDS);
}

/** A message this instance received (queued or delivered), by id. */
export async function findReceived(paths: MailPaths, id: string): Promise<MailRecord | undefined> {
  return (await read(paths.queue, id)) ?? (await read(paths.delivered, id));
}

/** A message this instance sent, by id. */
export async function findSent(paths: MailPaths, id: string): Promise<MailRecord | undefined> {
  return read(paths.sent, id);
}

/**
 * The model has it: from `queue/` to `delivered/`, with when and in which tick. Returns the
 * record, or undefined when it was not queued (already delivered: nothing happens twice).
 */
export async function markDelivered(paths: MailPaths, id: string, tick: number | undefined, now = new Date()): Promise<MailRecord | undefined> {
  const record = await read(paths.queue, id);
  if (!record) return undefined;
  const done: MailRecord = { ...record, delivered: { time: now.toISOString(), ...(tick === undefined ? {} : { tick }) } };
  await write(paths.delivered, done);
  await rm(fileOf(paths.queue, id), { force: true });
  await prune(paths.delivered, KEEP_RECORDS);
  return done;
}

/** A tick had it and ended before its model did: the next tick says it is redelivered. */
export async function noteHanded(paths: MailPaths, id: string, tick: number): Promise<void> {
  const record = await read(paths.queue, id);
  if (!record || record.handed?.includes(tick)) return;
  await write(paths.queue, { ...record, handed: [...(record.handed ?? []), tick] });
}

/** Take a message out of the queue: the record, or undefined when it is not (or no longer) queued. */
export async function withdrawQueued(paths: MailPaths, id: string): Promise<MailRecord | undefined> {
  const record = await read(paths.queue, id);
  if (!record) return undefined;
  await rm(fileOf(paths.queue, id), { force: true });
  return record;
}

/** Remove all but the newest `keep` records of a folder. */
async function prune(dir: string, keep: number): Promise<void> {
  const ids = await listIds(dir);
  for (const id of ids.slice(0, Math.max(0, ids.length - keep))) await rm(fileOf(dir, id), { force: true });
}
