/**
 * The supervision policy of watch, as pure functions: after a tick ends, should another one
 * start on its own (restart policy), and how long must the next tick wait (backoff)?
 *
 * - `restart: "no"`: a tick only starts when something wakes it (a message, a scheduled
 *   wake); a failed tick is not retried on its own (the next tick still gets a crash notice).
 * - `restart: "on-failure"`: a failed tick is followed by a restart tick (with the notice).
 * - `restart: "always"`: every tick is followed by another one, failed or not.
 * - `max_restarts` caps restarts (0 = unlimited) per stable period; at the cap watch stops
 *   restarting and waits for messages and scheduled wakes, until the period ends.
 * - Backoff: after `failures` failed ticks in a row, the next tick waits
 *   `min(initial * 2^(failures-1), max)`. After `reset_after` without a failure (counted from
 *   the last failure, or from the first restart when none failed) the failure and restart
 *   counts go back to zero (the agent has been stable) and a policy that gave up resumes.
 */

export type RestartPolicy = 'no' | 'on-failure' | 'always';

export interface SupervisorPolicy {
  readonly restart: RestartPolicy;
  /** 0 = unlimited. */
  readonly maxRestarts: number;
  readonly backoff: { readonly initial: number; readonly max: number; readonly resetAfter: number };
}

export interface SupervisorCounters {
  /** Failed ticks in a row. */
  readonly failures: number;
  /** Restarts made by the policy since the last stable period. */
  readonly restarts: number;
  /** When the last failed tick ended (ms since epoch), if any. */
  readonly lastFailureAt?: number;
  /** When the first restart of this period started: healthy "always" ticks count from here. */
  readonly firstRestartAt?: number;
}

export const INITIAL_COUNTERS: SupervisorCounters = { failures: 0, restarts: 0 };

/** Pure: the delay before tick number `failures + 1` after `failures` failures in a row. */
export function backoffDelay(failures: number, backoff: SupervisorPolicy['backoff']): number {
  if (failures <= 0) return 0;
  const exponent = Math.min(failures - 1, 40);
  return Math.min(backoff.initial * 2 ** exponent, backoff.max);
}

/** Pure: counters after a stable period without failures are reset. */
export function settleCounters(counters: SupervisorCounters, policy: SupervisorPolicy, now: number): SupervisorCounters {
  const since = counters.lastFailureAt ?? counters.firstRestartAt;
  if (since !== undefined && now - since >= policy.backoff.resetAfter) return INITIAL_COUNTERS;
  return counters;
}

/** Pure: counters when the policy starts a restart tick. */
export function recordRestart(counters: SupervisorCounters, now: number): SupervisorCounters {
  return { ...counters, restarts: counters.restarts + 1, firstRestartAt: counters.firstRestartAt ?? now };
}

/** Pure: counters after a tick ended. */
export function recordTickEnd(counters: SupervisorCounters, failed: boolean, now: number, policy: SupervisorPolicy): SupervisorCounters {
  const settled = settleCounters(counters, policy, now);
  if (failed) return { ...settled, failures: settled.failures + 1, lastFailureAt: now };
  return { ...settled, failures: 0 };
}

export interface RestartDecision {
  /** Start another tick without waiting for a message or a wake. */
  readonly restart: boolean;
  /** Wait this long before the next tick, whatever wakes it (backoff after failures). */
  readonly delayMs: number;
  /** Why, for logs and the status API. */
  readonly reason: string;
  /** The restart cap was reached: watch now waits for messages and wakes only. */
  readonly gaveUp: boolean;
}

/** Pure: given the counters after recordTickEnd, what happens next. */
export function decideAfterTick(counters: SupervisorCounters, failed: boolean, policy: SupervisorPolicy): RestartDecision {
  const delayMs = failed ? backoffDelay(counters.failures, policy.backoff) : policy.restart === 'always' ? policy.backoff.initial : 0;
  const wants = policy.restart === 'always' || (policy.restart === 'on-failure' && failed);
  if (!wants) {
    const reason = failed ? `tick failed; restart policy "${policy.restart}": waiting for a message or a scheduled wake` : 'tick ended normally';
    return { restart: false, delayMs, reason, gaveUp: false };
  }
  if (policy.maxRestarts > 0 && counters.restarts >= policy.maxRestarts) {
    return {
      restart: false,
      delayMs,
      reason: `max_restarts (${policy.maxRestarts}) reached: not restarting for reset_after (${Math.round(policy.backoff.resetAfter / 1000)}s) without a failure; a message or a scheduled wake still starts a tick`,
      gaveUp: true,
    };
  }
  const reason = failed
    ? `tick failed (${counters.failures} in a row): restart ${counters.restarts + 1}${policy.maxRestarts ? `/${policy.maxRestarts}` : ''} in ${Math.round(delayMs / 1000)}s`
    : `restart policy "always": next tick in ${Math.round(delayMs / 1000)}s`;
  return { restart: true, delayMs, reason, gaveUp: false };
}
