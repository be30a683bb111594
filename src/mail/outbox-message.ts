import { MESSAGE_ID, PEER_NAME } from './mail-record.js';

/**
 * The format of a file in the agent's `outbox/` (what `ak-mail` writes): header lines, an
 * empty line, then the text.
 *
 *   to: beta
 *   ask: yes
 *
 *   Is the nightly build green?
 *
 * Headers: `to` (an instance, or "operator"), `reply-to` (the id of a message it answers; then
 * `to` may be left out), `ask: yes` (the sender waits for an answer). Nothing else: in
 * particular no `from`, which only the host writes. The file is hostile input: this parser is
 * pure and strict, and every refusal says what was wrong.
 */

export interface OutboxMessage {
  readonly to?: string;
  readonly replyTo?: string;
  readonly ask: boolean;
  readonly text: string;
}

export type OutboxParse = { ok: true; message: OutboxMessage } | { ok: false; reason: string; text?: string };

/** A name in the outbox the post office takes (dotfiles are files being written). */
export const OUTBOX_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,119}$/;

const FORMAT = 'write "to: <instance>", an empty line, then the text (ak-mail send does)';

/** Pure: one outbox file's bytes → a message, or why not. */
export function parseOutboxMessage(data: Uint8Array, maxTextBytes: number): OutboxParse {
  let content: string;
  try {
    content = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return { ok: false, reason: 'it is not UTF-8 text' };
  }
  content = content.replace(/\r\n/g, '\n');
  const split = content.indexOf('\n\n');
  if (split < 0) return { ok: false, reason: `no empty line after the headers: ${FORMAT}`, text: content };
  const text = content.slice(split + 2).replace(/\n+$/, '');
  const headers = new Map<string, string>();
  for (const line of content.slice(0, split).split('\n')) {
    const match = /^([A-Za-z-]{1,32}):[ \t]*(.*)$/.exec(line);
    if (!match) return { ok: false, reason: `a header line is not "name: value": ${FORMAT}`, text };
    const key = match[1]!.toLowerCase();
    const value = match[2]!.trim();
    if (key === 'from') return { ok: false, reason: 'a "from" header: the kernel itself says who sent a message, and it is this instance', text };
    if (key !== 'to' && key !== 'reply-to' && key !== 'ask') return { ok: false, reason: `an unknown header "${key}" (to, reply-to and ask are known)`, text };
    if (headers.has(key)) return { ok: false, reason: `the header "${key}" twice`, text };
    headers.set(key, value);
  }
  const to = headers.get('to');
  const replyTo = headers.get('reply-to');
  const ask = headers.get('ask');
  if (to !== undefined && !PEER_NAME.test(to)) return { ok: false, reason: 'the recipient ("to") is not an instance name (1-64 of A-Z a-z 0-9 _ . -)', text };
  if (replyTo !== undefined && !MESSAGE_ID.test(replyTo)) return { ok: false, reason: '"reply-to" is not a message id (m-...; ak-mail list shows them)', text };
  if (ask !== undefined && ask !== 'yes' && ask !== 'no') return { ok: false, reason: '"ask" is neither yes nor no', text };
  if (to === undefined && replyTo === undefined) return { ok: false, reason: 'no recipient: a "to" or a "reply-to" header', text };
  if (text.trim() === '') return { ok: false, reason: 'the message text is empty' };
  const bytes = Buffer.byteLength(text);
  if (bytes > maxTextBytes) return { ok: false, reason: `the text is ${bytes} bytes, over this instance's limit of ${maxTextBytes} (mail.max_bytes)`, text };
  return { ok: true, message: { ...(to === undefined ? {} : { to }), ...(replyTo === undefined ? {} : { replyTo }), ask: ask === 'yes', text } };
}
