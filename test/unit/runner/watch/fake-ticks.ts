import type { StartTickFn, WatchTickOptions, WatchTickResult } from '../../../../src/runner/watch/watch-tick.js';

/** One tick started by watch: what it was given, what reached it since, and a way to end it. */
export interface StartedTick {
  readonly number: number;
  readonly messages: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly delivered: string[];
  /** Its model has read the prompt's messages. */
  read: boolean;
  readonly signal: AbortSignal;
  finish(result: WatchTickResult): void;
}

/**
 * A tick function for watch that runs nothing: each tick waits until the test ends it
 * (or watch aborts it). The loop under test is real; only the agent is missing.
 */
export class TickRecorder {
  readonly ticks: StartedTick[] = [];
  /** When set, every tick ends at once with this result. */
  autoFinish: WatchTickResult | undefined;
  /** The "model" has every message it is given (in the prompt or mid-tick) at once; false: none, as a tick that fails before the model runs. */
  modelReads = true;

  readonly start: StartTickFn = (_instance, options: WatchTickOptions) => {
    let resolveDone!: (result: WatchTickResult) => void;
    const done = new Promise<WatchTickResult>((resolve) => (resolveDone = resolve));
    // Like the real tick: once it has ended, its agent takes no more messages (they wait for the next tick).
    let ended = false;
    const finish = (result: WatchTickResult) => {
      ended = true;
      resolveDone(result);
    };
    const number = this.ticks.length + 1;
    const tick: StartedTick = { number, messages: options.messages, env: options.env, delivered: [], read: false, signal: options.signal, finish };
    options.signal.addEventListener('abort', () => finish({ failed: true, status: 'interrupted', tick: number }), { once: true });
    this.ticks.push(tick);
    const reads = this.modelReads;
    const autoFinish = this.autoFinish;
    // As a real model: it reads the prompt after the tick has started, and not once its tick has
    // ended; a tick that ends by itself ends after its model has read.
    setTimeout(() => {
      if (reads && !ended) {
        options.onInContext?.(options.messages);
        tick.read = true;
      }
      if (autoFinish) finish({ ...autoFinish, tick: number });
    }, 0);
    return Promise.resolve({
      tick: number,
      deliver: (message: string) => {
        if (ended) throw new Error('the agent no longer takes messages in this tick');
        tick.delivered.push(message);
        if (this.modelReads) options.onInContext?.([message]);
      },
      done,
    });
  };
}

