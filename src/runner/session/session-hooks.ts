import { describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { type ContextTracker, wrapUpMessage } from './context.js';
import type { HookEventKind, HookReply } from '../hooks/hook-channel.js';
import { BLOCK_COMPACTION, decideStop } from '../hooks/hook-policy.js';

/** The Stop hook blocks at most this often per session, so that an unfixable issue cannot keep an agent forever. */
export const MAX_STOP_BLOCKS = 3;

export interface SessionHookDeps {
  context: ContextTracker;
  logger: Logger;
  /** Pre-stop checks: the blocking issues (empty: the agent may stop). */
  preStopIssues(): Promise<string[]>;
  /** True once the runner is ending the session. */
  ended(): boolean;
  /** End the session because its context was about to be compacted. */
  endForCompaction(): void;
  /** The harness is alive: reset the idle watchdog. */
  touch(): void;
  marker(fields: Record<string, unknown>): void;
}

/**
 * Answers the harness's hooks for one session: the wrap-up reminder after tool calls, compaction
 * blocked (the tick ends instead), and the Stop hook held back while pre-stop issues remain.
 */
export class SessionHookHandler {
  private stopBlocks = 0;
  private wrapUpSent = false;

  constructor(private readonly deps: SessionHookDeps) {}

  async handle(kind: HookEventKind, input: Record<string, unknown>): Promise<HookReply> {
    this.deps.touch();
    switch (kind) {
      case 'post-tool-use':
        return this.afterToolUse();
      case 'pre-compact':
        this.deps.logger.warn({ trigger: input.trigger }, 'compaction requested: blocking it and ending the tick');
        this.deps.endForCompaction();
        return BLOCK_COMPACTION;
      case 'stop':
        return this.beforeStop();
    }
  }

  private afterToolUse(): HookReply {
    const { context, logger } = this.deps;
    if (!context.shouldWrapUp()) return {};
    const snapshot = context.snapshot();
    if (!this.wrapUpSent) {
      this.wrapUpSent = true;
      logger.info({ used: snapshot.used, window: snapshot.window }, 'context past the wrap-up ratio: telling the agent to wrap up');
      this.deps.marker({ event: 'wrap-up', context_used: snapshot.used, context_window: snapshot.window });
    }
    return { stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: wrapUpMessage(snapshot) } }) };
  }

  private async beforeStop(): Promise<HookReply> {
    const { logger } = this.deps;
    if (this.deps.ended()) return {};
    const issues = await this.deps.preStopIssues().catch((error: unknown) => {
      logger.warn({ err: describeError(error) }, 'pre-stop checks failed; letting the agent stop');
      return [] as string[];
    });
    this.deps.touch();
    const decision = decideStop(issues, this.stopBlocks, MAX_STOP_BLOCKS);
    if (decision.kind === 'allow') return {};
    if (decision.kind === 'give-up') {
      logger.warn({ issues }, `pre-stop issues remain after ${MAX_STOP_BLOCKS} reminders; letting the agent stop`);
      this.deps.marker({ event: 'pre-stop-gave-up', issues });
      return {};
    }
    this.stopBlocks++;
    this.deps.marker({ event: 'pre-stop-block', issues });
    return decision.reply;
  }
}
