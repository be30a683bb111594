import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { RunnerState } from '../../config/runner-state.js';
import { writeFileAtomic } from '../../util/atomic-write.js';
import type { RecentTick } from './tick-limits.js';

/**
 * The ticks of the last 24 hours and their cost, for the operator's limits (tick-limits.ts):
 * host-private (`<state>/kernel/tick-ledger.json`), kept by watch from `state.json`, whose
 * history holds only the last 50 ticks. Ticks run by `kernel-runner tick` count too (they are in
 * state.json); a tick that is still running counts with the cost it has reported so far.
 */

const ledgerSchema = z.object({
  ticks: z.array(z.object({ tick: z.int().min(0), started: z.string(), cost_usd: z.number().default(0) })).default([]),
});

type Ledger = z.output<typeof ledgerSchema>;

const DAY = 86_400_000;

async function load(file: string): Promise<Ledger> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return { ticks: [] };
  try {
    return ledgerSchema.parse(JSON.parse(text));
  } catch {
    return { ticks: [] };
  }
}

/** Merge what state.json knows into the ledger, drop what is older than a day, and return the recent ticks. */
export async function syncTickLedger(file: string, state: RunnerState, now: number): Promise<RecentTick[]> {
  const ledger = await load(file);
  const byTick = new Map(ledger.ticks.map((t) => [t.tick, t]));
  for (const record of [...state.history, ...(state.current ? [state.current] : [])]) {
    byTick.set(record.tick, { tick: record.tick, started: record.started, cost_usd: record.cost_usd ?? byTick.get(record.tick)?.cost_usd ?? 0 });
  }
  const ticks = [...byTick.values()].filter((t) => Date.parse(t.started) > now - DAY).sort((a, b) => a.tick - b.tick);
  if (JSON.stringify(ticks) !== JSON.stringify(ledger.ticks)) await writeFileAtomic(file, JSON.stringify({ ticks }, null, 1) + '\n', 0o600, { durable: false });
  return ticks.map((t) => ({ started: Date.parse(t.started), cost: t.cost_usd }));
}
