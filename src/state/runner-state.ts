import { z } from 'zod';
import { parseWith, readJsonFile } from '../config/parse.js';

/**
 * `<data>/system/state.json` (`dataPaths().state`): the runner's record of ticks, written by
 * the runner (runner/state.ts), read by the runner, watch and the MCP server (the tick number
 * at login names terminal archives `tty_N-tick-NNN`).
 */

const tokensSchema = z.strictObject({
  input: z.number().default(0),
  output: z.number().default(0),
  cache_creation: z.number().default(0),
  cache_read: z.number().default(0),
  /** Context used by the last main-thread message, and the window it was measured against. */
  context_used: z.number().default(0),
  context_window: z.number().default(0),
});

export const tickRecordSchema = z.object({
  tick: z.int().min(1),
  started: z.string(),
  duration_ms: z.number().optional(),
  status: z.enum(['running', 'ok', 'interrupted', 'failed']),
  error_class: z.string().optional(),
  error: z.string().optional(),
  attempts: z.int().optional(),
  session_id: z.string().optional(),
  tokens: tokensSchema.optional(),
  cost_usd: z.number().optional(),
  pid: z.int().optional(),
  /** The harness's process group while it runs (killed by the next tick if its runner died). */
  harness_pgid: z.int().optional(),
  /** The harness leader's start time (/proc/PID/stat field 22): proves a live PGID is still ours. */
  harness_start: z.string().optional(),
});

export const runnerStateSchema = z.looseObject({
  tick: z.int().min(0).default(0),
  current: tickRecordSchema.nullable().default(null),
  last: tickRecordSchema.nullable().default(null),
  history: z.array(tickRecordSchema).default([]),
});

export type TickTokens = z.output<typeof tokensSchema>;
export type TickRecord = z.output<typeof tickRecordSchema>;
export type RunnerState = z.output<typeof runnerStateSchema>;

export function parseState(input: unknown, file = 'state.json'): RunnerState {
  return parseWith(runnerStateSchema, input ?? {}, file);
}

/** The state in `file`; defaults when there is none; CONFIG_INVALID naming the fields when it is broken. */
export async function loadState(file: string): Promise<RunnerState> {
  return parseState(await readJsonFile(file), file);
}
