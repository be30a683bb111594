import type { HookReply } from './hook-channel.js';

/** What the Stop hook does with the pre-stop issues found. */
export type StopDecision = { kind: 'allow' } | { kind: 'give-up' } | { kind: 'block'; reply: HookReply };

/**
 * Pure: let the agent stop when nothing is left to fix; otherwise block it with the list, at
 * most `maxBlocks` times a tick (then give up and let it stop, so a tick always ends).
 */
export function decideStop(issues: readonly string[], blocksSoFar: number, maxBlocks: number): StopDecision {
  if (issues.length === 0) return { kind: 'allow' };
  if (blocksSoFar >= maxBlocks) return { kind: 'give-up' };
  const reason = `Before you end this tick, fix these (reminder ${blocksSoFar + 1} of ${maxBlocks}):\n${issues.map((i) => `- ${i}`).join('\n')}`;
  return { kind: 'block', reply: { stdout: JSON.stringify({ decision: 'block', reason }) } };
}

/** The PreCompact reply: compaction is always blocked; the tick ends instead. */
export const BLOCK_COMPACTION: HookReply = { stdout: JSON.stringify({ decision: 'block', reason: 'agent-kernel ends the tick instead of compacting the context.' }) };
