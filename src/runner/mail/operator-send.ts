import type { Instance } from '../../config/instance.js';
import { KernelError } from '../../errors.js';
import { appendEvent } from '../../observe/events/event-log.js';
import { MESSAGE_ID, type MailRecord, OPERATOR, OPERATOR_LABEL, newMessageId, senderName } from './mail-record.js';
import { enqueue, findReceived, findSent, withdrawQueued } from './mail-store.js';
import { hideReceived, showReceived } from './mail-view.js';

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
  if (message.text.trim() === '') throw new KernelError('USAGE', 'The message is empty: give the text as an argument or on stdin.');
  const bytes = Buffer.byteLength(message.text);
  if (bytes > OPERATOR_MESSAGE_MAX_BYTES) throw new KernelError('USAGE', `The message is ${bytes} bytes; at most ${OPERATOR_MESSAGE_MAX_BYTES} go into a tick. Put the rest in a file the agent can read.`);
  if (message.label !== undefined && !OPERATOR_LABEL.test(message.label)) {
    throw new KernelError('USAGE', `--from ${JSON.stringify(message.label)} is not allowed: use 1-64 of A-Z a-z 0-9 _ . @ : -.`);
  }
  let question: MailRecord | undefined;
  if (message.replyTo !== undefined) {
    if (!MESSAGE_ID.test(message.replyTo)) throw new KernelError('USAGE', `--reply-to ${JSON.stringify(message.replyTo)} is not a message id (m-...; kernel-runner mail ${instance.name} lists them).`);
    question = await findSent(instance.paths.mail, message.replyTo);
    if (!question || question.to !== OPERATOR) {
      throw new KernelError('USAGE', `${instance.name} sent the operator no message ${message.replyTo} (kernel-runner mail ${instance.name} lists what it sent).`);
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

/**
 * Take back a message that waits in an instance's queue (the operator's, or another agent's),
 * before its model has it: it leaves the queue and the agent's view of its inbox, and the event
 * log keeps that it was withdrawn, with its text. One its model already had cannot be withdrawn;
 * the error says so. `kernel-runner mail withdraw` and the web view both call this.
 */
export async function withdrawMessage(instance: Pick<Instance, 'name' | 'paths'>, id: string): Promise<MailRecord> {
  if (!MESSAGE_ID.test(id)) throw new KernelError('USAGE', `${JSON.stringify(id)} is not a message id (m-...; kernel-runner mail ${instance.name} lists them).`);
  const record = await withdrawQueued(instance.paths.mail, id);
  if (!record) {
    const had = await findReceived(instance.paths.mail, id);
    if (had?.delivered) {
      throw new KernelError('USAGE', `${id} cannot be withdrawn: ${instance.name}'s model has had it${had.delivered.tick === undefined ? '' : ` (tick ${had.delivered.tick})`}. Send a correction: kernel-runner send ${instance.name} "…".`);
    }
    throw new KernelError('USAGE', `${instance.name} has no message ${id} waiting (kernel-runner mail ${instance.name} lists its messages).`);
  }
  await hideReceived(instance.paths.mail, id);
  await appendEvent(instance.paths.events, {
    type: 'message.withdrawn',
    id,
    from: senderName(record.from),
    to: instance.name,
    text: record.text.slice(0, 4096),
    ...(record.handed?.length ? { handedTo: record.handed } : {}),
  });
  return record;
}
