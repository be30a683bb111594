import type { Usage } from '../harnesses/harness.js';

export type { Usage } from '../harnesses/harness.js';

export const DEFAULT_CONTEXT_WINDOW = 200_000;
const ONE_MILLION = 1_000_000;

/** Pure: the context a message occupied: everything sent to the model for it. */
export function contextUsed(usage: Usage): number {
  return (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
}

/**
 * Pure: the context window to measure against: what the harness reported for the model,
 * else the configured one, else the model name's hint ("[1m]" models have a million), else 200k.
 */
export function contextWindowFor(options: { reported?: number | undefined; configured?: number | undefined; model?: string | undefined }): number {
  if (options.reported && options.reported > 0) return options.reported;
  if (options.configured && options.configured > 0) return options.configured;
  if (options.model && /\[1m\]/i.test(options.model)) return ONE_MILLION;
  return DEFAULT_CONTEXT_WINDOW;
}

export interface ContextSnapshot {
  used: number;
  window: number;
  ratio: number;
}

/**
 * Follows the context of one harness session from its stream: the latest main-thread
 * message counts (sub-agents have their own context), and the window may be learnt late.
 */
export class ContextTracker {
  private used = 0;
  private reportedWindow: number | undefined;

  constructor(private readonly options: { configured?: number | undefined; model?: string | undefined; wrapUpRatio: number }) {}

  /** An assistant message: only main-thread ones (no parent tool use) move the gauge. */
  observeAssistant(usage: Usage | undefined, mainThread: boolean): void {
    if (!usage || !mainThread) return;
    const used = contextUsed(usage);
    // Synthetic messages (errors) carry zeros; they say nothing about the context.
    if (used > 0) this.used = used;
  }

  /** The model the harness reports (more precise than a configured alias such as "opus"). */
  observeModel(model: string | undefined): void {
    if (model && model !== '<synthetic>') this.options.model = model;
  }

  observeWindow(window: number | undefined): void {
    if (window && window > 0) this.reportedWindow = window;
  }

  snapshot(): ContextSnapshot {
    const window = contextWindowFor({ reported: this.reportedWindow, configured: this.options.configured, model: this.options.model });
    return { used: this.used, window, ratio: this.used / window };
  }

  /** True once the agent should be told to wrap up. */
  shouldWrapUp(): boolean {
    return this.snapshot().ratio >= this.options.wrapUpRatio;
  }
}

/** The text the agent gets (as a hook's additional context) once its context is nearly full. */
export function wrapUpMessage(snapshot: ContextSnapshot): string {
  const percent = Math.round(snapshot.ratio * 100);
  return (
    `Context is ${percent}% full (${snapshot.used.toLocaleString('en-US')} of ${snapshot.window.toLocaleString('en-US')} tokens). ` +
    'Wrap up now: save what you learnt to files in the data repo, close the terminals you opened, and end your turn. ' +
    'The tick will be ended before the context would be compacted; the next tick starts fresh.'
  );
}
