import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/**
 * One message as the host keeps it (host-private JSON, written by `kernel-runner send` and by
 * the post office of the sending instance's watch, read by the recipient's watch and by
 * `kernel-runner mail`): one schema for every process that shares the files.
 *
 * Everything that says who a message is from is written here by the host: `from` is the
 * operator (who ran `kernel-runner send`) or the instance whose outbox the message came out of.
 * No field of a file the agent wrote ever becomes `from`.
 */

/** `m-YYYYMMDD-HHMMSSmmm-xxxxxx`: sorts by the time the host stamped it. */
export const MESSAGE_ID = /^m-\d{8}-\d{9}-[0-9a-f]{6}$/;

/** An instance name as the registry allows it (config/registry.ts), or "operator" as a recipient. */
export const PEER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** A label the operator may give their own messages (`kernel-runner send --from alice`). */
export const OPERATOR_LABEL = /^[A-Za-z0-9_.@:-]{1,64}$/;

/** The one recipient that is not an instance: the person who runs them (read with `kernel-runner mail`). */
export const OPERATOR = 'operator';

export function newMessageId(now: Date = new Date()): string {
  return `m-${now.toISOString().replace(/[-:.]/g, '').replace('T', '-').replace('Z', '')}-${randomBytes(3).toString('hex')}`;
}

const id = z.string().regex(MESSAGE_ID);
const peer = z.string().regex(PEER_NAME);

export const senderSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('operator'), label: z.string().regex(OPERATOR_LABEL).optional() }),
  z.strictObject({ kind: z.literal('agent'), name: peer }),
]);

export type Sender = z.output<typeof senderSchema>;

export const mailRecordSchema = z.strictObject({
  id,
  from: senderSchema,
  to: peer,
  text: z.string(),
  /** When the host took it (ISO 8601). */
  sent: z.string(),
  reply_to: id.optional(),
  /** Sent with `ak-mail ask`: the sender waits for an answer. */
  expects_reply: z.boolean().optional(),
  /** For a reply: the message it answers, as its recipient (the one who asked) sent it. */
  question: z.strictObject({ id, sent: z.string(), text: z.string() }).optional(),
  /** Ticks that were handed it but ended before the model had it (it is then redelivered). */
  handed: z.array(z.int().min(0)).optional(),
  /** When the model had it in its context, and in which tick. */
  delivered: z.strictObject({ time: z.string(), tick: z.int().min(0).optional() }).optional(),
});

export type MailRecord = z.output<typeof mailRecordSchema>;

/** Pure: a record file's content, or undefined when it is torn or not a record. */
export function parseMailRecord(text: string): MailRecord | undefined {
  try {
    const parsed = mailRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Pure: who sent it, for people and logs ("operator", "operator (alice)", "beta"). */
export function senderName(from: Sender): string {
  return from.kind === 'agent' ? from.name : from.label ? `${OPERATOR} (${from.label})` : OPERATOR;
}
