import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatchedWriter } from '../../../src/util/batched-writer.js';

/** A writer whose writes the test lets finish one by one. */
function heldWrites<T>() {
  const batches: T[][] = [];
  const finish: Array<(error?: Error) => void> = [];
  const write = (items: T[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push(items);
      finish.push((error) => (error ? reject(error) : resolve()));
    });
  return { batches, write, finishNext: (error?: Error) => finish.shift()?.(error), pending: () => finish.length };
}

/** Let queued promise callbacks run (fake timers do not stop them). */
const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('BatchedWriter', () => {
  it('writes what came within delayMs as one batch, delayMs after the first item', async () => {
    const writes = heldWrites<string>();
    const writer = new BatchedWriter({ delayMs: 40, write: writes.write });
    writer.add('a');
    await vi.advanceTimersByTimeAsync(20);
    writer.add('b');
    await vi.advanceTimersByTimeAsync(19);
    expect(writes.batches).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(writes.batches).toEqual([['a', 'b']]);
    writes.finishNext();
    await settle();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes one batch at a time, in order, and flush() resolves once its batch is written', async () => {
    const writes = heldWrites<number>();
    const writer = new BatchedWriter({ delayMs: 40, write: writes.write });
    writer.add(1);
    const first = writer.flush();
    writer.add(2);
    let secondDone = false;
    const second = writer.flush().then(() => (secondDone = true));
    await settle();
    // The second batch waits for the first write.
    expect(writes.batches).toEqual([[1]]);
    writes.finishNext();
    await first;
    await settle();
    expect(writes.batches).toEqual([[1], [2]]);
    expect(secondDone).toBe(false);
    writes.finishNext();
    await second;
    expect(secondDone).toBe(true);
  });

  it('never rejects: a failed write drops its batch and the next one is written', async () => {
    const writes = heldWrites<string>();
    const writer = new BatchedWriter({ delayMs: 40, write: writes.write });
    writer.add('lost');
    const failed = writer.flush();
    await settle();
    writes.finishNext(new Error('ENOSPC'));
    await expect(failed).resolves.toBeUndefined();
    writer.add('kept');
    const next = writer.flush();
    await settle();
    writes.finishNext();
    await next;
    expect(writes.batches).toEqual([['lost'], ['kept']]);
  });

  it('a flush with nothing gathered writes nothing and resolves after the writes before it', async () => {
    const writes = heldWrites<string>();
    const writer = new BatchedWriter({ delayMs: 40, write: writes.write });
    writer.add('x');
    void writer.flush();
    let idle = false;
    const empty = writer.flush().then(() => (idle = true));
    await settle();
    expect(idle).toBe(false);
    writes.finishNext();
    await empty;
    expect(writes.batches).toEqual([['x']]);
  });

  it('beforeFlush adds the last items to the same batch; schedule() flushes with nothing added; no timer is left behind', async () => {
    const writes = heldWrites<string>();
    let screen = 0;
    const writer: BatchedWriter<string> = new BatchedWriter({ delayMs: 250, beforeFlush: () => writer.add(`screen ${++screen}`), write: writes.write });
    writer.add('raw');
    await vi.advanceTimersByTimeAsync(250);
    expect(writes.batches).toEqual([['raw', 'screen 1']]);
    writes.finishNext();
    await settle();
    // beforeFlush's own add() must not start another timer: nothing more without new activity.
    expect(vi.getTimerCount()).toBe(0);
    writer.schedule();
    await vi.advanceTimersByTimeAsync(250);
    expect(writes.batches).toEqual([['raw', 'screen 1'], ['screen 2']]);
    writes.finishNext();
    await settle();
    expect(vi.getTimerCount()).toBe(0);
  });
});
