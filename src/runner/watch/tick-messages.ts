import { type InboxMessage, formatMessage } from './inbox.js';
import type { DueWake } from './schedule.js';
import type { AgentStatus } from './status-api.js';

/** Pure: what a tick started by watch is told, in order: the crash notice, why it woke, the messages. */
export function tickMessages(input: { crashNotice: string | undefined; wake: DueWake | undefined; restart: boolean; messages: readonly InboxMessage[] }): string[] {
  const texts: string[] = [];
  if (input.crashNotice) texts.push(input.crashNotice);
  if (input.wake) texts.push(`Scheduled wake (${input.wake.kind} ${input.wake.spec})${input.wake.note ? `: ${input.wake.note}` : ''}`);
  if (input.restart && !input.crashNotice) texts.push('Restarted by the restart policy ("always"): continue your work.');
  texts.push(...input.messages.map(formatMessage));
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
