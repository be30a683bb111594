import { loadState } from '../../state/runner-state.js';
import { type TickOutcome, startTick } from '../tick/tick.js';
import type { Instance } from '../../config/instance.js';
import type { StartTickFn, WatchTickResult } from './watch-tick.js';
import { isProcessAlive } from '../../util/process/pid-lock.js';

/** Pure: what watch makes of a tick's outcome. Runner-side ends that are not the agent's fault (context, limits, stop) are not failures. */
export function watchResultOf(outcome: TickOutcome): WatchTickResult {
  const failed = outcome.status === 'failed' || outcome.errorClass === 'timeout' || outcome.errorClass === 'idle';
  return {
    failed,
    status: outcome.errorClass ? `${outcome.status} (${outcome.errorClass})` : outcome.status,
    tick: outcome.tick,
    ...(outcome.error ? { error: outcome.error } : {}),
    ...(outcome.retryAfterMs !== undefined ? { retryAfterMs: outcome.retryAfterMs } : {}),
  };
}

/** The real tick (src/runner/tick/tick.ts) behind watch's tick interface. */
export function realStartTick(baseEnv: NodeJS.ProcessEnv = process.env): StartTickFn {
  return async (instance, options) => {
    const running = await startTick(instance, {
      logger: options.logger,
      messages: options.messages,
      signal: options.signal,
      // The tick lays runner.env over this; secrets come between the runner's environment and it.
      env: { ...baseEnv, ...options.env },
      ...(options.trigger ? { trigger: options.trigger } : {}),
      ...(options.onInContext ? { onInContext: options.onInContext } : {}),
      ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    });
    return {
      tick: running.tick,
      deliver(message) {
        if (!running.deliver(message)) throw new Error('the agent no longer takes messages in this tick');
      },
      done: running.done.then(watchResultOf),
    };
  };
}

/**
 * At watch start: did the previous runner die in the middle of a tick (state.json still has
 * a running tick whose process is gone), or did the last tick end abnormally? A notice for
 * the next tick, or undefined. `diedMidTick` tells the restart policy whether to act.
 */
export async function detectInterruptedTick(instance: Instance): Promise<{ notice: string; diedMidTick: boolean } | undefined> {
  const state = await loadState(instance.paths.state);
  const current = state.current;
  if (current && (current.pid === undefined || (current.pid !== process.pid && !isProcessAlive(current.pid)))) {
    return {
      notice: `Notice: the runner died during tick ${current.tick} (started ${current.started}${current.pid ? `, PID ${current.pid}` : ''}); that tick never finished. Check what it left unfinished.`,
      diedMidTick: true,
    };
  }
  const last = state.last;
  // The same rule as watchResultOf: failures, and the watchdogs' ends.
  if (!current && last && (last.status === 'failed' || last.error_class === 'timeout' || last.error_class === 'idle')) {
    const why = [last.error_class, last.error].filter(Boolean).join(': ');
    return { notice: `Notice: tick ${last.tick} ended abnormally${why ? ` (${why})` : ''}. Check what it left unfinished.`, diedMidTick: false };
  }
  return undefined;
}
