import { sleep } from '../../src/util/sleep.js';

export interface PollOptions {
  /** Give up after this long (default 15 s). */
  timeoutMs?: number;
  /** Between looks (default 50 ms). */
  intervalMs?: number;
}

/**
 * Look with `probe` until it gives something other than undefined or false, and return that:
 * tests wait for a condition, never for a fixed time. Throws, naming `what`, after `timeoutMs`.
 * Usable in hooks and helpers too (expect.poll is for a test's own assertions).
 */
export async function pollUntil<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, what: string, options: PollOptions = {}): Promise<T> {
  const { timeoutMs = 15_000, intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}
