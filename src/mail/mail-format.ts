import { type BlockPart, excerpt, frameBlock, oneLine } from './framing.js';
import { type MailRecord, type Sender, OPERATOR } from './mail-record.js';

/** How much of the question a reply quotes back (the rest: `ak-mail read`). */
const QUESTION_MAX = 2000;

/** Pure: who it is from, in the kernel's words. */
export function describeSender(from: Sender): string {
  if (from.kind === 'agent') return `agent "${from.name}" (the instance ${from.name} on this host: the kernel took it from that instance's outbox)`;
  return from.label
    ? `the operator, signed "${from.label}" (kernel-runner send, on the host)`
    : 'the operator (kernel-runner send, on the host)';
}

function redeliveryLine(ticks: readonly number[] | undefined): BlockPart[] {
  if (!ticks || ticks.length === 0) return [];
  const which = ticks.length === 1 ? `tick ${ticks[0]}` : `ticks ${ticks.join(', ')}`;
  return [`Redelivered: ${which} ended before you had read it.`];
}

/** Pure: a message from the post office, as the agent reads it in its tick. */
export function formatMail(m: MailRecord): string {
  const author = m.from.kind === 'agent' ? m.from.name : OPERATOR;
  const parts: BlockPart[] = [
    `From: ${describeSender(m.from)}`,
    `Message ${m.id}, sent ${m.sent}${m.expects_reply ? '; it asks you for an answer' : ''}.`,
    ...redeliveryLine(m.handed),
  ];
  if (m.question) {
    parts.push(`It answers your message ${m.question.id} of ${m.question.sent}, in which you wrote:`, {
      quote: excerpt(m.question.text, QUESTION_MAX, `ak-mail read ${m.question.id}`),
    });
  } else if (m.reply_to) {
    parts.push(`It answers message ${m.reply_to}.`);
  }
  parts.push(`${author} wrote:`, { quote: m.text });
  parts.push(`To answer, in a terminal: ak-mail reply ${m.id} "your answer"`);
  return frameBlock(parts);
}

/** Pure: a file the agent's own container put in `inbox/`: its own words, whatever the file claims. */
export function formatInboxNote(name: string, text: string, handedIn?: readonly number[]): string {
  return frameBlock([
    `From: you. inbox/${oneLine(name, 120)} is a file in your own inbox/ folder: anything in your container can write there, so the kernel cannot say who wrote it, and it is neither the operator's nor another agent's message (they come through the post office).`,
    ...redeliveryLine(handedIn),
    'It says:',
    { quote: text },
  ]);
}
