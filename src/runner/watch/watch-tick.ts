import type { Instance } from '../../config/instance.js';
import type { Logger } from '../../log/logger.js';
import type { TickRetry } from '../tick/tick.js';

/** What watch needs from a tick: how it is started, and what it reports at the end. */
export interface WatchTickOptions {
  readonly logger: Logger;
  /** Handed to the agent at the start of the tick (messages, the wake's note, a crash notice). */
  readonly messages: readonly string[];
  /** Aborting stops the tick gracefully (SIGINT, grace period, kill). */
  readonly signal: AbortSignal;
  /** Extra environment for the harness: secrets, then runner.env. */
  readonly env: Readonly<Record<string, string>>;
  /** What started the tick. */
  readonly trigger?: string;
  /** Told the messages (of `messages` or delivered) once the agent's model has had them: only then are they delivered. */
  readonly onInContext?: (messages: readonly string[]) => void;
  /** Told when an attempt of the tick failed and the next is scheduled (undefined: the next attempt runs). */
  readonly onRetry?: (retry: TickRetry | undefined) => void;
}

export interface WatchTickResult {
  /** The tick failed (crash, timeout, error): drives the backoff, the restart policy and the next crash notice. */
  readonly failed: boolean;
  /** A one-word status for people ("normal", "abnormal", "error"...). */
  readonly status: string;
  readonly tick?: number;
  readonly error?: string;
  /** A usage limit the tick did not wait out: no tick before this long. */
  readonly retryAfterMs?: number;
}

export interface WatchRunningTick {
  readonly tick?: number;
  /** Hand a message to the running agent (mid-tick notification). */
  deliver(message: string): Promise<void> | void;
  readonly done: Promise<WatchTickResult>;
}

export type StartTickFn = (instance: Instance, options: WatchTickOptions) => Promise<WatchRunningTick>;
