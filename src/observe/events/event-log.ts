import { constants } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { BatchedWriter } from '../../util/batched-writer.js';
import { sleep } from '../../util/sleep.js';
import { readUntrustedRange } from '../../util/untrusted-fs.js';
import { LineFollower } from './line-follower.js';
import { type InstanceEvent, type NewInstanceEvent, parseEventLine } from './event-schema.js';

/** Past this the log is rotated to `events.jsonl.1` (one previous file is kept). */
export const EVENT_LOG_MAX_BYTES = 8 * 1024 * 1024;
const FLUSH_MS = 50;

/**
 * Appends events to an instance's event log. Several processes append to the same file
 * (server, runner, web view): each flush is one O_APPEND write of whole lines. Writing
 * never throws: a full disk must not stop a terminal or a tick.
 */
export class EventLog {
  private readonly lines: BatchedWriter<string>;

  constructor(
    readonly file: string,
    private readonly tick: () => number | undefined = () => undefined,
    options: { maxBytes?: number } = {},
  ) {
    const maxBytes = options.maxBytes ?? EVENT_LOG_MAX_BYTES;
    this.lines = new BatchedWriter({ delayMs: FLUSH_MS, write: (lines) => appendLines(file, lines.join(''), maxBytes) });
  }

  emit(event: NewInstanceEvent): void {
    const tick = this.tick();
    const full = { time: new Date().toISOString(), ...(tick === undefined ? {} : { tick }), ...event };
    this.lines.add(JSON.stringify(full) + '\n');
  }

  flush(): Promise<void> {
    return this.lines.flush();
  }
}

/** Append one event now (a process that logs one thing and moves on: a tick starting, a message delivered). Never throws. */
export async function appendEvent(file: string, event: NewInstanceEvent): Promise<void> {
  const log = new EventLog(file);
  log.emit(event);
  await log.flush();
}

async function appendLines(file: string, text: string, maxBytes: number): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const size = await sizeOf(file);
  if (size + Buffer.byteLength(text) > maxBytes) await rotate(file, maxBytes - Buffer.byteLength(text));
  const handle = await open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    await handle.write(text);
  } finally {
    await handle.close();
  }
}

function sizeOf(file: string): Promise<number> {
  return stat(file).then(
    (s) => s.size,
    () => 0,
  );
}

/** A lock older than this was left by a writer that died while rotating. */
const ROTATE_LOCK_STALE_MS = 10_000;

/**
 * Move the log to `.1`, once, however many writers (server, runner, web) find it full at the
 * same moment: under a lock file, and only if the file is still past the cap (another writer may
 * have rotated it already and started a fresh one, which must not go over `.1`). A writer that
 * finds the lock taken appends to the current file; the next append rotates.
 */
async function rotate(file: string, limit: number): Promise<void> {
  const lock = `${file}.rotating`;
  let handle;
  try {
    handle = await open(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch {
    const age = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
    if (age > ROTATE_LOCK_STALE_MS) await rm(lock, { force: true });
    return;
  }
  try {
    if ((await sizeOf(file)) > limit) await rename(file, `${file}.1`).catch(() => {});
  } finally {
    await handle.close();
    await rm(lock, { force: true });
  }
}

/** Every event in the log (the rotated file first), oldest first. */
export async function readEvents(file: string): Promise<{ events: InstanceEvent[]; offset: number }> {
  const previous = await readUntrustedRange(path.dirname(file), `${path.basename(file)}.1`, { maxBytes: EVENT_LOG_MAX_BYTES * 2 });
  const current = await readUntrustedRange(path.dirname(file), path.basename(file), { maxBytes: EVENT_LOG_MAX_BYTES * 2 });
  const events: InstanceEvent[] = [];
  for (const chunk of [previous, current]) {
    if (!chunk) continue;
    for (const line of chunk.data.toString('utf8').split('\n')) {
      const event = parseEventLine(line);
      if (event) events.push(event);
    }
  }
  return { events, offset: completeLinesEnd(current?.data) };
}

function completeLinesEnd(data: Buffer | undefined): number {
  if (!data) return 0;
  return data.lastIndexOf(0x0a) + 1;
}

export interface FollowOptions {
  /** Between looks at the file when nothing new was there. */
  pollMs?: number;
  /** Called after each look that found nothing new (tests count them). */
  onIdle?: () => void;
}

/**
 * New events of the log since the last call, from `offset` on (a log that shrank was rotated: its
 * new file is read from the start). Every reader that follows the log goes through this.
 */
export class EventFollower {
  private readonly lines: LineFollower;

  constructor(file: string, offset: number) {
    this.lines = new LineFollower(path.dirname(file), path.basename(file), offset);
  }

  /** Where the log ends now: a follower from here sees only what is written later. */
  static async atEnd(file: string): Promise<EventFollower> {
    const end = await readUntrustedRange(path.dirname(file), path.basename(file), { from: 0, maxBytes: 0 }).catch(() => undefined);
    return new EventFollower(file, end?.size ?? 0);
  }

  async next(maxBytes = 1024 * 1024): Promise<InstanceEvent[]> {
    const got = await this.lines.read(maxBytes);
    return (got?.lines ?? []).map(parseEventLine).filter((event): event is InstanceEvent => event !== undefined);
  }
}

/**
 * Follow the log from `offset`: calls `onEvent` for each new event until `signal` aborts.
 * Polls (every 100 ms): cheap, and works across rotation (the file shrinks: start over).
 */
export async function followEvents(file: string, offset: number, onEvent: (event: InstanceEvent) => void, signal: AbortSignal, options: FollowOptions = {}): Promise<void> {
  const follower = new EventFollower(file, offset);
  while (!signal.aborted) {
    const events = await follower.next();
    for (const event of events) onEvent(event);
    if (events.length > 0) continue;
    options.onIdle?.();
    await sleep(options.pollMs ?? 100, signal);
  }
}
