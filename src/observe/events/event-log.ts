import { constants } from 'node:fs';
import { mkdir, open, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { readUntrustedRange } from '../../util/untrusted-fs.js';
import { type KernelEvent, type NewKernelEvent, parseEventLine } from './event-schema.js';

/** Past this the log is rotated to `events.jsonl.1` (one previous file is kept). */
export const EVENT_LOG_MAX_BYTES = 8 * 1024 * 1024;
const FLUSH_MS = 50;

/**
 * Appends events to an instance's event log. Several processes append to the same file
 * (server, runner, web view): each flush is one O_APPEND write of whole lines. Writing
 * never throws: a full disk must not stop a terminal or a tick.
 */
export class EventLog {
  private pending: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly tick: () => number | undefined = () => undefined,
  ) {}

  emit(event: NewKernelEvent): void {
    const tick = this.tick();
    const full = { time: new Date().toISOString(), ...(tick === undefined ? {} : { tick }), ...event };
    this.pending.push(JSON.stringify(full) + '\n');
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const text = this.pending.join('');
    this.pending = [];
    if (!text) return this.chain;
    this.chain = this.chain.then(() => appendLines(this.file, text)).catch(() => {});
    return this.chain;
  }
}

/** Append one event now (a process that logs one thing and moves on: a tick starting, a message delivered). Never throws. */
export async function appendEvent(file: string, event: NewKernelEvent): Promise<void> {
  const log = new EventLog(file);
  log.emit(event);
  await log.flush();
}

async function appendLines(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const size = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  if (size + text.length > EVENT_LOG_MAX_BYTES) await rename(file, `${file}.1`).catch(() => {});
  const handle = await open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    await handle.write(text);
  } finally {
    await handle.close();
  }
}

/** Every event in the log (the rotated file first), oldest first. */
export async function readEvents(file: string): Promise<{ events: KernelEvent[]; offset: number }> {
  const previous = await readUntrustedRange(path.dirname(file), `${path.basename(file)}.1`, { maxBytes: EVENT_LOG_MAX_BYTES * 2 });
  const current = await readUntrustedRange(path.dirname(file), path.basename(file), { maxBytes: EVENT_LOG_MAX_BYTES * 2 });
  const events: KernelEvent[] = [];
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

/**
 * Follow the log from `offset`: calls `onEvent` for each new event until `signal` aborts.
 * Polls (every 100 ms): cheap, and works across rotation (the file shrinks: start over).
 */
export async function followEvents(file: string, offset: number, onEvent: (event: KernelEvent) => void, signal: AbortSignal, pollMs = 100): Promise<void> {
  let position = offset;
  while (!signal.aborted) {
    const chunk = await readUntrustedRange(path.dirname(file), path.basename(file), { from: position, maxBytes: 1024 * 1024 });
    if (chunk && chunk.size < position) {
      position = 0;
      continue;
    }
    if (chunk && chunk.data.length > 0) {
      const end = completeLinesEnd(chunk.data);
      for (const line of chunk.data.subarray(0, end).toString('utf8').split('\n')) {
        const event = parseEventLine(line);
        if (event) onEvent(event);
      }
      position += end;
      if (end > 0) continue;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, pollMs);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }
}
