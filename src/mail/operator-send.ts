import type { Instance } from '../config/instance.js';
import { CodedError } from '../errors.js';
import { appendEvent } from '../observe/events/event-log.js';
import { MESSAGE_ID, type MailRecord, OPERATOR, OPERATOR_LABEL, newMessageId, senderName } from './mail-record.js';
import { enqueue, findSent } from './mail-store.js';
import { showReceived } from './mail-view.js';

/** The most an operator's message may hold (it goes whole into a tick's prompt). */
export const OPERATOR_MESSAGE_MAX_BYTES = 1024 * 1024;

/**
 * `kernel-runner send`: a message from the operator, put straight into the instance's
 * host-private queue (the container cannot write there, so nothing in it can pose as this).
 * `replyTo` answers a message the agent sent to the operator (`ak-mail send operator`).
 */
export async function sendOperatorMessage(
  instance: Pick<Instance, 'name' | 'paths'>,
  message: { text: string; label?: string; replyTo?: string },
  now: Date = new Date(),
): Promise<MailRecord> {
  if (message.text.trim() === '') throw new CodedError('USAGE', 'The message is empty: give the text as an argument or on stdin.');
  const bytes = Buffer.byteLength(message.text);
  if (bytes > OPERATOR_MESSAGE_MAX_BYTES) throw new CodedError('USAGE', `The message is ${bytes} bytes; at most ${OPERATOR_MESSAGE_MAX_BYTES} go into a tick. Put the rest in a file the agent can read.`);
  if (message.label !== undefined && !OPERATOR_LABEL.test(message.label)) {
    throw new CodedError('USAGE', `--from ${JSON.stringify(message.label)} is not allowed: use 1-64 of A-Z a-z 0-9 _ . @ : -.`);
  }
  let question: MailRecord | undefined;
  if (message.replyTo !== undefined) {
    if (!MESSAGE_ID.test(message.replyTo)) throw new CodedError('USAGE', `--reply-to ${JSON.stringify(message.replyTo)} is not a message id (m-...; kernel-runner mail ${instance.name} lists them).`);
    question = await findSent(instance.paths.mail, message.replyTo);
    if (!question || question.to !== OPERATOR) {
      throw new CodedError('USAGE', `${instance.name} sent the operator no message ${message.replyTo} (kernel-runner mail ${instance.name} lists what it sent).`);
    }
  }
  const record: MailRecord = {
    id: newMessageId(now),
    from: { kind: 'operator', ...(message.label ? { label: message.label } : {}) },
    to: instance.name,
    text: message.text,
    sent: now.toISOString(),
    ...(question ? { reply_to: question.id, question: { id: question.id, sent: question.sent, text: question.text } } : {}),
  };
  await enqueue(instance.paths.mail, record);
  await showReceived(instance.paths.mail, record);
  await appendEvent(instance.paths.events, { type: 'message.received', id: record.id, from: senderName(record.from), to: instance.name, ...(record.reply_to ? { replyTo: record.reply_to } : {}) });
  return record;
}
