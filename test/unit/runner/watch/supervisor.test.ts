import { describe, expect, it } from 'vitest';
import {
  INITIAL_COUNTERS,
  type SupervisorCounters,
  type SupervisorPolicy,
  backoffDelay,
  decideAfterTick,
  recordRestart,
  recordTickEnd,
  settleCounters,
} from '../../../../src/runner/watch/supervisor.js';

const backoff = { initial: 5_000, max: 60_000, resetAfter: 600_000 };
const policy = (restart: SupervisorPolicy['restart'], maxRestarts = 0): SupervisorPolicy => ({ restart, maxRestarts, backoff });

describe('backoffDelay', () => {
  it.each([
    [0, 0],
    [1, 5_000],
    [2, 10_000],
    [3, 20_000],
    [4, 40_000],
    [5, 60_000],
    [50, 60_000],
  ])('after %i failures waits %i ms', (failures, expected) => {
    expect(backoffDelay(failures, backoff)).toBe(expected);
  });
});

describe('decideAfterTick', () => {
  const failedOnce: SupervisorCounters = { failures: 1, restarts: 0, lastFailureAt: 0 };
  it.each([
    // policy, failed, counters, restart?, gave up?, delay
    ['no', false, INITIAL_COUNTERS, false, false, 0],
    ['no', true, failedOnce, false, false, 5_000],
    ['on-failure', false, INITIAL_COUNTERS, false, false, 0],
    ['on-failure', true, failedOnce, true, false, 5_000],
    ['on-failure', true, { failures: 3, restarts: 2, lastFailureAt: 0 }, true, false, 20_000],
    ['always', false, INITIAL_COUNTERS, true, false, 5_000],
    ['always', true, failedOnce, true, false, 5_000],
  ] as const)('restart=%s failed=%s %j', (restart, failed, counters, wants, gaveUp, delay) => {
    const decision = decideAfterTick(counters, failed, policy(restart));
    expect(decision).toMatchObject({ restart: wants, gaveUp, delayMs: delay });
  });

  it.each([
    ['on-failure', 3, 2, true],
    ['on-failure', 3, 3, false],
    ['always', 1, 1, false],
    ['always', 0, 1000, true],
  ] as const)('restart=%s max_restarts=%i after %i restarts: restart=%s', (restart, max, restarts, wants) => {
    const decision = decideAfterTick({ failures: 1, restarts, lastFailureAt: 0 }, true, policy(restart, max));
    expect(decision.restart).toBe(wants);
    expect(decision.gaveUp).toBe(!wants);
    if (!wants) expect(decision.reason).toMatch(/max_restarts \(\d+\) reached/);
  });
});

describe('counters', () => {
  it('count failures in a row and reset them on success', () => {
    let c = recordTickEnd(INITIAL_COUNTERS, true, 1000, policy('on-failure'));
    c = recordTickEnd(c, true, 2000, policy('on-failure'));
    expect(c.failures).toBe(2);
    c = recordTickEnd(c, false, 3000, policy('on-failure'));
    expect(c.failures).toBe(0);
  });

  it('reset failures and restarts after a stable period without failure', () => {
    const c: SupervisorCounters = { failures: 4, restarts: 3, lastFailureAt: 1000 };
    expect(settleCounters(c, policy('on-failure'), 1000 + backoff.resetAfter - 1)).toBe(c);
    expect(settleCounters(c, policy('on-failure'), 1000 + backoff.resetAfter)).toEqual(INITIAL_COUNTERS);
    expect(recordTickEnd(c, true, 1000 + backoff.resetAfter, policy('on-failure'))).toMatchObject({ failures: 1, restarts: 0 });
  });
});

describe('restart periods', () => {
  it('healthy "always" restarts count from the first restart and reset after reset_after', () => {
    let c = recordRestart(INITIAL_COUNTERS, 1000);
    c = recordRestart(c, 2000);
    expect(c).toMatchObject({ restarts: 2, firstRestartAt: 1000 });
    expect(settleCounters(c, policy('always', 2), 1000 + backoff.resetAfter - 1)).toBe(c);
    expect(settleCounters(c, policy('always', 2), 1000 + backoff.resetAfter)).toEqual(INITIAL_COUNTERS);
  });
});
