import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../../src/util/sleep.js';

describe('sleep', () => {
  it('waits the time it was given', async () => {
    const began = performance.now();
    await sleep(30);
    expect(performance.now() - began).toBeGreaterThanOrEqual(29);
  });

  it('resolves (does not reject) when its signal aborts, and at once when it was aborted already', async () => {
    const stop = new AbortController();
    const began = performance.now();
    const sleeping = sleep(600_000, stop.signal).then(() => 'woke');
    stop.abort();
    expect(await sleeping).toBe('woke');
    expect(await sleep(600_000, stop.signal).then(() => 'woke')).toBe('woke');
    expect(performance.now() - began).toBeLessThan(60_000);
  });

  it('leaves no abort listener behind: 2,000 sleeps on one signal, no MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const stop = new AbortController();
    let most = 0;
    try {
      for (let i = 0; i < 2000; i++) {
        const sleeping = sleep(0, stop.signal);
        most = Math.max(most, getEventListeners(stop.signal, 'abort').length);
        await sleeping;
      }
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(most).toBe(1);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
