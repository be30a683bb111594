/** Capped exponential backoff with full jitter: attempt 1 waits about `initialMs`, each next one doubles, never past `maxMs`. */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

/**
 * Pure: the delay before retry number `attempt` (1-based). Jitter keeps many instances
 * that failed together from retrying together: the delay is drawn from [cap/2, cap].
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 30));
  const cap = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  return Math.round(cap / 2 + random() * (cap / 2));
}
