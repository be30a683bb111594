import { setTimeout as delay } from 'node:timers/promises';

/**
 * Wait `ms`, or less when `signal` aborts first; resolves either way. The abort listener goes
 * with the sleep, so a loop that sleeps on one signal every 100 ms keeps none of them.
 */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, signal ? { signal } : undefined);
  } catch (error) {
    if ((error as { name?: unknown }).name !== 'AbortError') throw error;
  }
}
