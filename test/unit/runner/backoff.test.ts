import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../src/runner/backoff.js';

const policy = { initialMs: 10_000, maxMs: 300_000 };

describe('backoffDelay', () => {
  it.each([
    [1, 5_000, 10_000],
    [2, 10_000, 20_000],
    [3, 20_000, 40_000],
    [6, 150_000, 300_000],
    [7, 150_000, 300_000],
    [50, 150_000, 300_000],
  ])('attempt %d waits between %d and %d ms', (attempt, low, high) => {
    expect(backoffDelay(attempt, policy, () => 0)).toBe(low);
    expect(backoffDelay(attempt, policy, () => 1)).toBe(high);
    const random = backoffDelay(attempt, policy);
    expect(random).toBeGreaterThanOrEqual(low);
    expect(random).toBeLessThanOrEqual(high);
  });
});
