import { describe, expect, it } from 'vitest';
import { parseAgentConfig } from '../../../../../src/config/agent-config.js';
import { tickLimitHold } from '../../../../../src/runner/watch/limits/tick-limits.js';

const limits = (l: Record<string, unknown>) => parseAgentConfig({ runner: { limits: l } }).runner.limits;
const NOW = Date.parse('2026-11-27T12:00:00Z');
const ago = (ms: number, cost = 0) => ({ started: NOW - ms, cost });
const MIN = 60_000;

describe('tickLimitHold', () => {
  it('lets a tick start when no limit is reached', () => {
    expect(tickLimitHold(limits({}), [], NOW)).toBeUndefined();
    expect(tickLimitHold(limits({ min_interval: '1m' }), [ago(2 * MIN)], NOW)).toBeUndefined();
  });

  it('defaults to 10 s between starts and 30 ticks an hour, no budget', () => {
    expect(limits({})).toEqual({ min_interval: 10_000, ticks_per_hour: 30 });
  });

  it('holds a tick until min_interval after the last start', () => {
    expect(tickLimitHold(limits({ min_interval: '1m' }), [ago(20_000), ago(5 * MIN)], NOW)).toEqual({
      limit: 'min_interval',
      until: NOW + 40_000,
      reason: 'runner.limits.min_interval (1m) since the last tick started (2026-11-27T11:59:40.000Z): the next tick waits until 2026-11-27T12:00:40.000Z',
    });
    expect(tickLimitHold(limits({ min_interval: '0s' }), [ago(0)], NOW)).toBeUndefined();
  });

  it('holds a tick once ticks_per_hour started in the last hour, until the oldest of them is an hour old', () => {
    const ticks = [ago(70 * MIN), ago(50 * MIN), ago(30 * MIN), ago(10 * MIN)];
    const hold = tickLimitHold(limits({ min_interval: '0s', ticks_per_hour: 3 }), ticks, NOW);
    expect(hold).toMatchObject({ limit: 'ticks_per_hour', until: NOW + 10 * MIN });
    expect(hold?.reason).toMatch(/^runner\.limits\.ticks_per_hour \(3\) reached: 3 ticks started in the last hour/);
    expect(tickLimitHold(limits({ min_interval: '0s', ticks_per_hour: 4 }), ticks, NOW)).toBeUndefined();
  });

  it('holds ticks once the last 24 hours cost the daily budget, until enough of it is a day old', () => {
    const ticks = [ago(23 * 60 * MIN, 2), ago(20 * 60 * MIN, 2), ago(60 * MIN, 1.5)];
    const hold = tickLimitHold(limits({ min_interval: '0s', daily_budget_usd: 5 }), ticks, NOW);
    expect(hold).toMatchObject({ limit: 'daily_budget_usd', until: NOW + 60 * MIN });
    expect(hold?.reason).toMatch(/\(\$5\.00\) reached: ticks of the last 24 hours cost \$5\.50/);
    expect(tickLimitHold(limits({ min_interval: '0s', daily_budget_usd: 6 }), ticks, NOW)).toBeUndefined();
    // Ticks older than a day no longer count.
    expect(tickLimitHold(limits({ min_interval: '0s', daily_budget_usd: 1 }), [ago(25 * 60 * MIN, 10)], NOW)).toBeUndefined();
  });

  it('names the limit that holds longest when several do', () => {
    const ticks = Array.from({ length: 3 }, (_, i) => ago(i * MIN + 1000, 1));
    const hold = tickLimitHold(limits({ min_interval: '30s', ticks_per_hour: 3, daily_budget_usd: 2 }), ticks, NOW);
    expect(hold?.limit).toBe('daily_budget_usd');
  });
});
