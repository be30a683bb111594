import { dataPaths } from '../config/paths.js';
import { type RunnerState, type TickRecord, loadState as loadStateFile } from '../config/runner-state.js';
import { writeFileAtomic } from '../util/atomic-write.js';

/**
 * Writing `<data>/system/state.json` (schema: config/runner-state.ts). `tick` is the number of
 * the current (or latest) tick; it is written before the harness starts, because the MCP
 * server reads it at login (terminal archives are named `tty_N-tick-NNN`).
 */

export type { RunnerState, TickRecord, TickTokens } from '../config/runner-state.js';

export async function loadState(dataDir: string): Promise<RunnerState> {
  return loadStateFile(dataPaths(dataDir).state);
}

/** Ticks kept in `history` (the tick logs keep the rest). */
const HISTORY_LENGTH = 50;

async function saveState(dataDir: string, state: RunnerState): Promise<void> {
  await writeFileAtomic(dataPaths(dataDir).state, JSON.stringify(state, null, 2) + '\n');
}

/** Take the next tick number and record the tick as running. Call with the tick lock held. */
export async function beginTickRecord(dataDir: string, record: Omit<TickRecord, 'tick' | 'status'>): Promise<TickRecord> {
  let state = await loadState(dataDir);
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
    state = { ...state, current: null, last: died, history: [...state.history, died].slice(-HISTORY_LENGTH) };
  }
  const current: TickRecord = { ...record, tick: state.tick + 1, status: 'running' };
  await saveState(dataDir, { ...state, tick: current.tick, current });
  return current;
}

/** Update the running tick (session id, tokens so far...). */
export async function updateTickRecord(dataDir: string, patch: Partial<TickRecord>): Promise<void> {
  const state = await loadState(dataDir);
  if (!state.current) return;
  await saveState(dataDir, { ...state, current: { ...state.current, ...patch } });
}

/** Record the end of the running tick: it becomes `last` and joins the history. */
export async function finishTickRecord(dataDir: string, record: TickRecord): Promise<void> {
  const state = await loadState(dataDir);
  const { pid: _pid, harness_pgid: _pgid, ...finished } = record;
  const history = [...state.history.filter((t) => t.tick !== finished.tick), finished].slice(-HISTORY_LENGTH);
  await saveState(dataDir, { ...state, current: null, last: finished, history });
}
