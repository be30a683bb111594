import { describe, expect, it } from 'vitest';
import type { Classification } from '../../../../src/runner/harnesses/classify.js';
import { addSessionTokens, type RetryLimits, retryDelay, tickVerdict } from '../../../../src/runner/tick/tick-verdict.js';

const limits: RetryLimits = { attempt: 1, maxAttempts: 3, initialMs: 1000, maxMs: 60_000, maxRateLimitWaitMs: 3_600_000, now: 0, deadline: 1_000_000 };
const transient: Classification = { errorClass: 'transient', reason: 'overloaded' };
const fatal: Classification = { errorClass: 'fatal', reason: 'not logged in' };
const noJitter = (): number => 1;

describe('retryDelay', () => {
  it.each<[string, Parameters<typeof retryDelay>[0], Partial<RetryLimits>, number | undefined]>([
    ['a transient error is retried after the backoff', { classification: transient }, {}, 1000],
    ['the backoff doubles with each attempt', { classification: transient }, { attempt: 3, maxAttempts: 5 }, 4000],
    ['a success is not retried', {}, {}, undefined],
    ['a fatal error is not retried', { classification: fatal }, {}, undefined],
    ['a session the runner ended is not retried', { classification: transient, endedBy: 'idle' }, {}, undefined],
    ['no attempt past runner.retry.max_attempts', { classification: transient }, { attempt: 3 }, undefined],
    ['no retry that would start past the deadline', { classification: transient }, { now: 999_500 }, undefined],
    ['a usage limit is waited out until a little past its reset', { classification: { errorClass: 'rate_limit', reason: 'limit', retryAfterMs: 60_000 } }, {}, 65_000],
    ['a usage limit longer than the tick waits is not', { classification: { errorClass: 'rate_limit', reason: 'limit', retryAfterMs: 7_200_000 } }, { deadline: 1e9 }, undefined],
    ['a 429 without a reset time gets the backoff', { classification: { errorClass: 'rate_limit', reason: '429' } }, {}, 1000],
  ])('%s', (_what, session, overrides, expected) => {
    expect(retryDelay(session, { ...limits, ...overrides }, noJitter)).toBe(expected);
  });
});

describe('tickVerdict', () => {
  it.each<[string, Parameters<typeof tickVerdict>[0], ReturnType<typeof tickVerdict>]>([
    ['a clean session: ok', {}, { status: 'ok' }],
    ['our MCP server did not connect: failed', { endedBy: 'mcp', endDetail: 'status failed' }, { status: 'failed', errorClass: 'mcp', error: 'status failed' }],
    ['a watchdog ended it: interrupted', { endedBy: 'timeout', endDetail: 'runner.timeout' }, { status: 'interrupted', errorClass: 'timeout', error: 'runner.timeout' }],
    ['a configured limit: interrupted', { classification: { errorClass: 'limit', reason: 'max turns' } }, { status: 'interrupted', errorClass: 'limit', error: 'max turns' }],
    ['an error: failed, with when to retry', { classification: { errorClass: 'rate_limit', reason: 'usage limit', retryAfterMs: 5 } }, { status: 'failed', errorClass: 'rate_limit', error: 'usage limit', retryAfterMs: 5 }],
  ])('%s', (_what, last, expected) => {
    expect(tickVerdict(last)).toEqual(expected);
  });
});

describe('addSessionTokens', () => {
  it('adds the counts of every attempt and keeps the latest context', () => {
    const zero = { input: 0, output: 0, cache_creation: 0, cache_read: 0, context_used: 0, context_window: 0 };
    const one = addSessionTokens(zero, { tokens: { input: 1, output: 2, cache_creation: 3, cache_read: 4 }, context: { used: 50, window: 200, ratio: 0.25 } });
    const two = addSessionTokens(one, { tokens: { input: 10, output: 20, cache_creation: 30, cache_read: 40 }, context: { used: 7, window: 100, ratio: 0.07 } });
    expect(two).toEqual({ input: 11, output: 22, cache_creation: 33, cache_read: 44, context_used: 7, context_window: 100 });
  });
});
