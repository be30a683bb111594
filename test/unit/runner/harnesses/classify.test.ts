import { describe, expect, it } from 'vitest';
import { type ErrorSignals, classifyHarnessError, isRetryable } from '../../../../src/runner/harnesses/classify.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

describe('classifyHarnessError', () => {
  const cases: Array<[string, ErrorSignals, string | undefined]> = [
    ['a successful result', { resultIsError: false, resultSubtype: 'success', resultText: 'done' }, undefined],
    ['not logged in (real 2.1.197 output)', { resultIsError: true, resultSubtype: 'success', resultText: 'Not logged in · Please run /login', apiErrorStatus: null, assistantError: 'authentication_failed' }, 'fatal'],
    ['invalid API key, 401', { resultIsError: true, resultSubtype: 'success', resultText: 'Invalid API key · Please run /login', apiErrorStatus: 401 }, 'fatal'],
    ['billing', { resultIsError: true, resultSubtype: 'success', resultText: 'Credit balance is too low', assistantError: 'billing_error' }, 'fatal'],
    ['model not found', { resultIsError: true, resultSubtype: 'success', resultText: 'API Error: 404 model: claude-nope not found', apiErrorStatus: 404 }, 'fatal'],
    ['prompt too long', { resultIsError: true, resultSubtype: 'success', resultText: 'Prompt is too long' }, 'fatal'],
    ['overloaded 529', { resultIsError: true, resultSubtype: 'success', resultText: 'API Error: 529 Overloaded', apiErrorStatus: 529 }, 'transient'],
    ['a 500', { resultIsError: true, resultSubtype: 'success', resultText: 'API Error: 500 Internal server error', apiErrorStatus: 500 }, 'transient'],
    ['429 without a reset time', { resultIsError: true, resultSubtype: 'success', resultText: 'Too many requests', apiErrorStatus: 429 }, 'transient'],
    ['network', { resultIsError: true, resultSubtype: 'error_during_execution', resultText: 'fetch failed: ECONNRESET' }, 'transient'],
    ['assistant server_error only', { resultIsError: true, resultSubtype: 'success', resultText: '', assistantError: 'server_error' }, 'transient'],
    ['retries that ended in an error', { resultIsError: true, resultSubtype: 'error_during_execution', lastRetry: { status: 529 } }, 'transient'],
    ['usage limit with reset (rate_limit_event)', { resultIsError: true, resultSubtype: 'success', resultText: 'limit', rateLimit: { status: 'rejected', resetsAt: NOW + 3_600_000 } }, 'rate_limit'],
    ['usage limit with reset (text)', { resultIsError: true, resultSubtype: 'success', resultText: `Claude AI usage limit reached|${NOW / 1000 + 60}` }, 'rate_limit'],
    ['max turns', { resultIsError: true, resultSubtype: 'error_max_turns' }, 'limit'],
    ['max budget', { resultIsError: true, resultSubtype: 'error_max_budget_usd' }, 'limit'],
    ['no result at all', {}, 'harness'],
    ['an unknown error', { resultIsError: true, resultSubtype: 'error_during_execution', resultText: 'something odd' }, 'harness'],
  ];
  it.each(cases)('%s', (_name, signals, expected) => {
    expect(classifyHarnessError(signals, NOW)?.errorClass).toBe(expected);
  });

  it('says how long a usage limit lasts', () => {
    const c = classifyHarnessError({ resultIsError: true, resultText: `Claude AI usage limit reached|${NOW / 1000 + 60}` }, NOW);
    expect(c?.retryAfterMs).toBe(60_000);
    expect(c?.reason).toContain('resets at');
  });

  it('keeps the harness message as the reason', () => {
    expect(classifyHarnessError({ resultIsError: true, resultText: 'Not logged in · Please run /login' })?.reason).toContain('Not logged in');
  });

  it('retries only transient errors and rate limits', () => {
    expect(['transient', 'rate_limit', 'fatal', 'harness', 'context'].map((c) => isRetryable(c as never))).toEqual([true, true, false, false, false]);
  });
});

describe('classification reasons', () => {
  it('says a repeated message once', () => {
    expect(classifyHarnessError({ resultIsError: true, resultText: 'Not logged in · Please run /login', assistantText: 'Not logged in · Please run /login' })?.reason).toBe(
      'Not logged in · Please run /login',
    );
  });
});
