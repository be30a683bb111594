import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { RunnerState } from '../../../state/runner-state.js';
import { writeFileAtomic } from '../../../util/atomic-write.js';
import type { RecentTick } from './tick-limits.js';

/**
 * The ticks of the last 24 hours and their cost, for the operator's limits (tick-limits.ts):
 * host-private (`<state>/private/tick-ledger.json`). Watch notes each tick it starts; the
 * tick records of `state.json` (whose history keeps only the last 50) add their cost, and the
 * ticks `kernel-runner tick` ran. A tick still running counts with the cost reported so far.
 */

const entrySchema = z.object({ tick: z.int().min(0).optional(), started: z.string(), cost_usd: z.number().default(0) });
const ledgerSchema = z.object({ ticks: z.array(entrySchema).default([]) });

type Entry = z.output<typeof entrySchema>;

const DAY = 86_400_000;

async function load(file: string): Promise<Entry[]> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return [];
  try {
    return ledgerSchema.parse(JSON.parse(text)).ticks;
  } catch {
    return [];
  }
}

async function save(file: string, before: Entry[], ticks: Entry[]): Promise<void> {
  if (JSON.stringify(ticks) !== JSON.stringify(before)) await writeFileAtomic(file, JSON.stringify({ ticks }, null, 1) + '\n', 0o600, { durable: false });
}

function recent(ticks: Entry[], now: number): Entry[] {
  return ticks.filter((t) => Date.parse(t.started) > now - DAY).sort((a, b) => Date.parse(a.started) - Date.parse(b.started));
}

/** Watch started a tick (its number when the tick said it). */
export async function noteTickStarted(file: string, started: Date, tick: number | undefined): Promise<void> {
  const before = await load(file);
  const ticks = tick !== undefined && before.some((t) => t.tick === tick) ? before : [...before, { ...(tick === undefined ? {} : { tick }), started: started.toISOString(), cost_usd: 0 }];
  await save(file, before, recent(ticks, started.getTime()));
}

/** Merge what state.json knows into the ledger, drop what is older than a day, and return the recent ticks. */
export async function syncTickLedger(file: string, state: RunnerState, now: number): Promise<RecentTick[]> {
  const before = await load(file);
  const ticks = [...before];
  for (const record of [...state.history, ...(state.current ? [state.current] : [])]) {
    const at = ticks.findIndex((t) => t.tick === record.tick);
    const entry = { tick: record.tick, started: at < 0 ? record.started : ticks[at]!.started, cost_usd: record.cost_usd ?? (at < 0 ? 0 : ticks[at]!.cost_usd) };
    if (at < 0) ticks.push(entry);
    else ticks[at] = entry;
  }
  const kept = recent(ticks, now);
  await save(file, before, kept);
  return kept.map((t) => ({ started: Date.parse(t.started), cost: t.cost_usd }));
}
