import { type TickRecord, loadState } from '../../state/runner-state.js';
import type { Logger } from '../../log/logger.js';
import type { TickPlace } from '../../observe/tick-files.js';

/** Whether a tick runs now (state.json has a current tick): work outside one is said to be between ticks. */
export async function tickRunning(stateFile: string): Promise<boolean> {
  return (await loadState(stateFile).catch(() => undefined))?.current != null;
}

/** The current tick from the runner's host-private `state.json`; a missing or broken file means tick 0 (logged). */
export async function loadTick(stateFile: string, logger?: Logger): Promise<number> {
  try {
    return (await loadState(stateFile)).tick;
  } catch (error) {
    logger?.warn({ err: error, file: stateFile }, 'state.json cannot be used; reporting tick 0');
    return 0;
  }
}

/**
 * Where work done now is filed: the running tick, or between ticks after the last one (no tick
 * runs). Before any tick (tick 0) there is no last one: tick 0 already says so.
 */
export async function loadTickPlace(stateFile: string, logger?: Logger): Promise<TickPlace> {
  const tick = await loadTick(stateFile, logger);
  return { tick, between: tick > 0 && !(await tickRunning(stateFile)) };
}

/** The running tick's build failure (its changed Containerfile did not build at its start), if any. */
export async function loadBuildFailure(stateFile: string): Promise<TickRecord['build_failed']> {
  try {
    return (await loadState(stateFile)).current?.build_failed;
  } catch {
    return undefined;
  }
}
