import { EventEmitter } from 'node:events';
import { CodedError } from '../../errors.js';
import { lastSyncAt, syncAll } from '../terminal/terminal-sync.js';
import type { TtyContext } from '../terminal/tty-context.js';
import { MAX_WAIT_SECONDS } from '../api/types.js';
import { type Judgement, type WaitUntil, judgeWait } from './wait-judge.js';

/** How often the wait asks the host about the terminals (foreground program, exit). */
const POLL_MS = 100;

/** Wakes a waiting wait() when anything happens on any terminal. */
export class Activity {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  wake(): void {
    this.emitter.emit('activity');
  }

  /** Resolves at the next activity, after `ms`, or on abort. */
  next(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.emitter.off('activity', done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, ms));
      this.emitter.once('activity', done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

/**
 * Wait until what the agent started is done, the timeout passes, or the host is gone
 * (`hostGone`); resolves with why. Reporting is the caller's (see wait-report.ts).
 */
export async function waitUntilDone(
  ctx: TtyContext,
  activity: Activity,
  { timeoutMs, hostGone, signal, until }: { timeoutMs: number; hostGone: () => boolean; signal?: AbortSignal; until?: WaitUntil },
): Promise<Judgement & { started: number }> {
  // A caller that passed no number (seconds as before, from JavaScript) must not wait without end.
  if (!Number.isFinite(timeoutMs)) throw new CodedError('USAGE', `A wait needs its timeout in milliseconds; got ${String(timeoutMs)}.`);
  const started = Date.now();
  const deadline = started + Math.max(0, Math.min(MAX_WAIT_SECONDS * 1000, timeoutMs));
  // type() has just asked the host (before sending its keys): the first poll may wait its turn.
  let lastPoll = lastSyncAt(ctx);
  for (;;) {
    signal?.throwIfAborted();
    if (hostGone()) return { reason: 'timeout', started };
    if (Date.now() - lastPoll >= POLL_MS) {
      await syncAll(ctx);
      lastPoll = Date.now();
    }
    const judgement = await judgeWait(ctx, started, until);
    if (judgement) return { ...judgement, started };
    const now = Date.now();
    if (now >= deadline) return { reason: 'timeout', started };
    await activity.next(Math.min(POLL_MS, ctx.inputWatch.recheckInMs ?? POLL_MS, deadline - now), signal);
  }
}
