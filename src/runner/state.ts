import { type RunnerState, type TickRecord, loadState as loadStateFile } from '../state/runner-state.js';
import { writeFileAtomic } from '../util/atomic-write.js';

/**
 * Writing the host-private `<state>/kernel/state.json` (paths.ts; schema: state/runner-state.ts). `tick` is the number of
 * the current (or latest) tick; it is written before the harness starts, because the MCP
 * server reads it at login (terminal archives are named `tty_N-tick-NNN`).
 */

export type { RunnerState, TickRecord, TickTokens } from '../state/runner-state.js';

/** `file` is the instance's `paths.state`. */
export async function loadState(file: string): Promise<RunnerState> {
  return loadStateFile(file);
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
