import type { TickLimits } from '../../../config/agent-config.js';

/**
 * The operator's limits on the ticks watch starts (`runner.limits`), as a pure function of
 * the ticks that started recently and what they cost. A tick may start only when none holds it
 * back; until then its work (messages, a wake, a restart) waits: nothing is dropped.
 */

export interface RecentTick {
  /** Epoch ms. */
  readonly started: number;
  /** USD, as the harness reported it (0 while unknown). */
  readonly cost: number;
}

export interface LimitHold {
  readonly limit: 'min_interval' | 'ticks_per_hour' | 'daily_budget_usd';
  /** Epoch ms: when this limit lets a tick start. */
  readonly until: number;
  /** For people: the limit, how it was reached, and when the work goes on. */
  readonly reason: string;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function seconds(ms: number): string {
  return ms % 60_000 === 0 && ms >= 60_000 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`;
}

/** Pure: what holds the next tick back at `now`, the one that holds it longest; undefined: it may start. */
export function tickLimitHold(limits: TickLimits, ticks: readonly RecentTick[], now: number): LimitHold | undefined {
  const holds: LimitHold[] = [];
  const at = (ms: number) => new Date(ms).toISOString();
  const starts = ticks.map((t) => t.started).sort((a, b) => a - b);
  const last = starts.at(-1);
  if (last !== undefined && limits.min_interval > 0 && now < last + limits.min_interval) {
    const until = last + limits.min_interval;
    holds.push({ limit: 'min_interval', until, reason: `runner.limits.min_interval (${seconds(limits.min_interval)}) since the last tick started (${at(last)}): the next tick waits until ${at(until)}` });
  }
  const hour = starts.filter((s) => s > now - HOUR);
  if (hour.length >= limits.ticks_per_hour) {
    const until = hour[hour.length - limits.ticks_per_hour]! + HOUR;
    holds.push({ limit: 'ticks_per_hour', until, reason: `runner.limits.ticks_per_hour (${limits.ticks_per_hour}) reached: ${hour.length} ticks started in the last hour; the next waits until ${at(until)}` });
  }
  if (limits.daily_budget_usd !== undefined) {
    const day = ticks.filter((t) => t.started > now - DAY).sort((a, b) => a.started - b.started);
    let spent = day.reduce((sum, t) => sum + t.cost, 0);
    if (spent >= limits.daily_budget_usd) {
      const total = spent;
      let until = now;
      for (const t of day) {
        spent -= t.cost;
        until = t.started + DAY;
        if (spent < limits.daily_budget_usd) break;
      }
      holds.push({
        limit: 'daily_budget_usd',
        until,
        reason: `runner.limits.daily_budget_usd ($${limits.daily_budget_usd.toFixed(2)}) reached: ticks of the last 24 hours cost $${total.toFixed(2)}; the next tick waits until ${at(until)}`,
      });
    }
  }
  return holds.sort((a, b) => b.until - a.until)[0];
}
