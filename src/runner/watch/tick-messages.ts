import { frameBlock, frameNotice } from '../../mail/framing.js';
import type { DueWake } from './schedule/schedule.js';
import type { AgentStatus } from './service/status-api.js';

/**
 * Pure: what a tick started by watch is told, in order: the crash notice, why it woke, the
 * messages (already framed by mail-format.ts). Every part is a framed block (mail/framing.ts):
 * the wake's note comes from the agent's own schedule.json and is quoted as such.
 */
export function tickMessages(input: { crashNotice: string | undefined; wake: DueWake | undefined; restart: boolean; messages: readonly string[] }): string[] {
  const texts: string[] = [];
  if (input.crashNotice) texts.push(frameNotice(input.crashNotice));
  if (input.wake) {
    const what = `Scheduled wake (${input.wake.kind} ${input.wake.spec}), from your own system/schedule.json`;
    texts.push(frameBlock(input.wake.note ? [`${what}; your note:`, { quote: input.wake.note }] : [`${what}.`]));
  }
  if (input.restart && !input.crashNotice) texts.push('Restarted by the restart policy ("always"): continue your work.');
  texts.push(...input.messages);
  return texts;
}

/** Pure: the status API's next wake: the earlier of the due scheduled wake and a pending restart (its time). */
export function describeNextWake(due: DueWake | undefined, restartAt: number | undefined): AgentStatus['nextWake'] {
  const candidates: { time: number; reason: string }[] = [];
  if (due) candidates.push({ time: due.time.getTime(), reason: `${due.kind} ${due.spec}${due.note ? `: ${due.note}` : ''}` });
  if (restartAt !== undefined) candidates.push({ time: restartAt, reason: 'restart' });
  candidates.sort((a, b) => a.time - b.time);
  const first = candidates[0];
  return first ? { time: new Date(first.time).toISOString(), reason: first.reason } : undefined;
}
