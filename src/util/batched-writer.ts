import { SerialQueue } from './serial-queue.js';

export interface BatchedWriterOptions<T> {
  /** A flush comes at most this long after the first item (or schedule()) since the last flush. */
  delayMs: number;
  /** Write one batch (never empty). Batches are written one at a time, in order. */
  write: (items: T[]) => Promise<void>;
  /**
   * Called at the start of every flush, before the batch is taken: the last items for it
   * (a snapshot of what is on screen now, output gathered so far) are added here.
   */
  beforeFlush?: () => void;
}

/**
 * Gathers items and writes them in batches: one write per `delayMs` while items come, not one
 * per item. Writing never throws (a full disk must not stop a terminal or a tick): a batch
 * that fails is dropped and the next one is tried.
 */
export class BatchedWriter<T> {
  private pending: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly writes = new SerialQueue();

  constructor(private readonly options: BatchedWriterOptions<T>) {}

  add(item: T): void {
    this.pending.push(item);
    this.schedule();
  }

  /** Flush within delayMs, also with nothing added (beforeFlush has something to add). */
  schedule(): void {
    this.timer ??= setTimeout(() => void this.flush(), this.options.delayMs);
  }

  /** Write what is gathered now; resolves once it (and every batch before it) is written or failed. */
  flush(): Promise<void> {
    this.options.beforeFlush?.();
    clearTimeout(this.timer);
    this.timer = undefined;
    const items = this.pending;
    this.pending = [];
    if (items.length === 0) return this.writes.idle();
    return this.writes.run(() => this.options.write(items)).catch(() => undefined);
  }
}
