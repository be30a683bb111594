import { z } from 'zod';
import { parseWith, readJsonFile } from '../config/parse.js';
import { writeFileAtomic } from '../util/atomic-write.js';

/**
 * `<state>/private/state.json` (`instancePaths().state`, host-private: never shown to the
 * container): the runner's record of ticks. Written by the tick (begin, update, finish below,
 * with the tick lock held), read by the runner, watch, the web view and the MCP server (the
 * tick number at login names terminal archives `tty_N-tick-NNN`). Every reader and writer goes
 * through this module. `tick` is the current (or latest) tick's number: written before the
 * harness starts, because the server reads it at login.
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
  /** The agent's changed Containerfile did not build at the tick's start (the tick went on in the container as it was): the step and its output. */
  build_failed: z.object({ step: z.string(), output: z.array(z.string()), error: z.string() }).optional(),
  /** The tick's retry policy at work: the attempt that failed, why, when the next starts, and when retries end. */
  retry: z
    .object({ attempt: z.int().min(1), max_attempts: z.int().min(1), cause: z.string(), next_at: z.string(), deadline: z.string() })
    .optional(),
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

/** The state in `file` (`paths.state`); defaults when there is none; CONFIG_INVALID naming the fields when it is broken. */
export async function loadState(file: string): Promise<RunnerState> {
  return parseState(await readJsonFile(file), file);
}

/** Ticks kept in `history` (the tick logs keep the rest). */
const HISTORY_LENGTH = 50;

async function saveState(file: string, state: RunnerState): Promise<void> {
  await writeFileAtomic(file, JSON.stringify(state, null, 2) + '\n', 0o600);
}

/** Take the next tick number and record the tick as running. Call with the tick lock held. */
export async function beginTickRecord(file: string, record: Omit<TickRecord, 'tick' | 'status'>): Promise<TickRecord> {
  let state = await loadState(file);
  if (state.current) {
    // A tick still marked running under a lock we could take: its runner died. Record it as such.
    const died: TickRecord = {
      ...state.current,
      status: 'failed',
      error_class: 'harness',
      error: `the runner (PID ${state.current.pid ?? '?'}) stopped during this tick; its outcome was not recorded`,
    };
    delete died.pid;
    delete died.harness_pgid;
    delete died.harness_start;
    state = { ...state, current: null, last: died, history: [...state.history, died].slice(-HISTORY_LENGTH) };
  }
  const current: TickRecord = { ...record, tick: state.tick + 1, status: 'running' };
  await saveState(file, { ...state, tick: current.tick, current });
  return current;
}

/** Update the running tick (session id, tokens so far...). */
export async function updateTickRecord(file: string, patch: Partial<TickRecord>): Promise<void> {
  const state = await loadState(file);
  if (!state.current) return;
  await saveState(file, { ...state, current: { ...state.current, ...patch } });
}

/** Record the end of the running tick: it becomes `last` and joins the history. */
export async function finishTickRecord(file: string, record: TickRecord): Promise<void> {
  const state = await loadState(file);
  const { pid: _pid, harness_pgid: _pgid, harness_start: _start, ...finished } = record;
  const history = [...state.history.filter((t) => t.tick !== finished.tick), finished].slice(-HISTORY_LENGTH);
  await saveState(file, { ...state, current: null, last: finished, history });
}
