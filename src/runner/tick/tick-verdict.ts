import { backoffDelay } from '../backoff.js';
import { isRetryable } from '../harnesses/classify.js';
import type { SessionResult } from '../session/session-result.js';
import type { TickTokens } from '../../state/runner-state.js';
import type { TickOutcome } from './tick.js';

/** What the tick's retry loop needs to know about its limits. */
export interface RetryLimits {
  attempt: number;
  maxAttempts: number;
  initialMs: number;
  maxMs: number;
  /** The longest usage limit waited out within the tick; a longer one ends the tick with `retryAfterMs`. */
  maxRateLimitWaitMs: number;
  now: number;
  /** The tick's deadline (epoch ms): no retry that would start past it. */
  deadline: number;
}

/**
 * Pure: how long to wait before trying the session again, or undefined to stop here. Only a
 * retryable error of a session the runner did not end is retried, within the attempts and the
 * deadline; a usage limit is waited out until a little past its reset time.
 */
export function retryDelay(session: Pick<SessionResult, 'endedBy' | 'classification'>, limits: RetryLimits, random: () => number = Math.random): number | undefined {
  const classification = session.classification;
  if (session.endedBy || !classification || !isRetryable(classification.errorClass)) return undefined;
  if (limits.attempt >= limits.maxAttempts) return undefined;
  let delay = backoffDelay(limits.attempt, { initialMs: limits.initialMs, maxMs: limits.maxMs }, random);
  if (classification.errorClass === 'rate_limit' && classification.retryAfterMs !== undefined) {
    if (classification.retryAfterMs > limits.maxRateLimitWaitMs) return undefined;
    // A little past the reset time, so as not to arrive just before it.
    delay = classification.retryAfterMs + Math.round(random() * 5000);
  }
  return limits.now + delay >= limits.deadline ? undefined : delay;
}

/** Pure: the tick's status from its last session. */
export function tickVerdict(last: Pick<SessionResult, 'endedBy' | 'endDetail' | 'classification'>): Pick<TickOutcome, 'status' | 'errorClass' | 'error' | 'retryAfterMs'> {
  if (last.endedBy) return { status: last.endedBy === 'mcp' ? 'failed' : 'interrupted', errorClass: last.endedBy, ...(last.endDetail ? { error: last.endDetail } : {}) };
  const classification = last.classification;
  if (!classification) return { status: 'ok' };
  return {
    status: classification.errorClass === 'limit' ? 'interrupted' : 'failed',
    errorClass: classification.errorClass,
    error: classification.reason,
    ...(classification.retryAfterMs !== undefined ? { retryAfterMs: classification.retryAfterMs } : {}),
  };
}

/** Pure: the tick's tokens with one more session: counts add up, the context is the latest session's. */
export function addSessionTokens(totals: TickTokens, session: Pick<SessionResult, 'tokens' | 'context'>): TickTokens {
  return {
    input: totals.input + session.tokens.input,
    output: totals.output + session.tokens.output,
    cache_creation: totals.cache_creation + session.tokens.cache_creation,
    cache_read: totals.cache_read + session.tokens.cache_read,
    context_used: session.context.used,
    context_window: session.context.window,
  };
}
