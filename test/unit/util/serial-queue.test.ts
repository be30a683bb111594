import { describe, expect, it } from 'vitest';
import { SerialQueue } from '../../../src/util/serial-queue.js';

/** A promise the test settles. */
function deferred<T = void>() {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('SerialQueue', () => {
  it('runs one task at a time, in the order they were queued', async () => {
    const queue = new SerialQueue();
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const gates = [deferred(), deferred(), deferred()];
    const runs = gates.map((gate, i) =>
      queue.run(async () => {
        running += 1;
        most = Math.max(most, running);
        log.push(`start ${i}`);
        await gate.promise;
        log.push(`end ${i}`);
        running -= 1;
        return i;
      }),
    );
    // Let go of them in the opposite order: the second still starts only after the first ended.
    gates[2]!.resolve();
    gates[1]!.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['start 0']);
    gates[0]!.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
    expect(most).toBe(1);
  });

  it('rejects only the failing task: one that throws or rejects does not stop the ones after it', async () => {
    const queue = new SerialQueue();
    const thrown = queue.run(() => {
      throw new Error('sync');
    });
    const rejected = queue.run(() => Promise.reject(new Error('async')));
    const after = queue.run(() => 'still runs');
    await expect(thrown).rejects.toThrow('sync');
    await expect(rejected).rejects.toThrow('async');
    expect(await after).toBe('still runs');
  });

  it('idle() waits for every task queued so far and never rejects', async () => {
    const queue = new SerialQueue();
    const gate = deferred();
    let done = false;
    const failing = queue.run(async () => {
      await gate.promise;
      throw new Error('boom');
    });
    failing.catch(() => undefined);
    void queue.run(() => {
      done = true;
    });
    const idle = queue.idle().then(() => 'idle');
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    gate.resolve();
    expect(await idle).toBe('idle');
    expect(done).toBe(true);
  });
});
