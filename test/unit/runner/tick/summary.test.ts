import { describe, expect, it } from 'vitest';
import { formatTickSummary } from '../../../../src/runner/tick/summary.js';
import type { TickOutcome } from '../../../../src/runner/tick/tick.js';

const base: TickOutcome = {
  tick: 12,
  status: 'ok',
  paused: false,
  durationMs: 192_400,
  attempts: 1,
  tokens: { input: 1000, output: 2000, cache_creation: 30_000, cache_read: 12_120, context_used: 45_000, context_window: 200_000 },
  costUsd: 0.4217,
  lastMessage: 'done',
  logFile: '/srv/scout/system/logs/tick-012.jsonl',
};

describe('formatTickSummary', () => {
  it.each<[string, Partial<TickOutcome>, string]>([
    ['a good tick', {}, 'scout tick 12: ok in 3m12s · 45,120 tokens · $0.42 · log /srv/scout/system/logs/tick-012.jsonl'],
    [
      'a fatal error: the line, then the steps that fix it',
      { status: 'failed', errorClass: 'fatal', error: 'Not logged in · Please run /login', paused: true, durationMs: 4000, fix: ['claude setup-token', 'kernel-runner resume scout'] },
      [
        'scout tick 12: failed (fatal) in 4s · 45,120 tokens · $0.42 · Not logged in · Please run /login · log /srv/scout/system/logs/tick-012.jsonl',
        'scout is paused: no tick runs until it is resumed. To fix it:',
        '  claude setup-token',
        '  kernel-runner resume scout',
      ].join('\n'),
    ],
    [
      'a usage limit not waited out',
      { status: 'failed', errorClass: 'rate_limit', error: 'usage limit reached', retryAfterMs: 7_500_000, attempts: 2, durationMs: 3_700_000 },
      'scout tick 12: failed (rate_limit) in 1h01m · 45,120 tokens · $0.42 · 2 attempts · usage limit reached · retry in 2h05m · log /srv/scout/system/logs/tick-012.jsonl',
    ],
  ])('%s', (_name, fields, expected) => {
    expect(formatTickSummary('scout', { ...base, ...fields })).toBe(expected);
  });
});
