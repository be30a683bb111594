import { chmod, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../util/atomic-write.js';
import { escapeControls } from '../util/control-chars.js';
import { oneLine } from './framing.js';
import type { MailPaths } from './mail-store.js';
import { type MailRecord, senderName } from './mail-record.js';

/**
 * What the agent sees of its mail: host-written text files in the instance's shell folder,
 * which the container sees read-only at `<data>/tmp/kernel/mail/` (paths.ts): `inbox/<id>.txt`
 * (what it received), `sent/<id>.txt` (what it sent), `receipts/<outbox file>.txt` (what the post
 * office did with each file of its outbox). The first line of each is its one-line summary, so
 * `ak-mail list` needs nothing but the shell. Control characters in what anyone wrote are shown
 * as escapes: a message cannot drive the terminal it is read in.
 */

/** Files kept per folder of the view (the oldest go first; the host keeps more in mail/). */
export const KEEP_VIEWS = 500;

function excerptOf(text: string): string {
  return `"${oneLine(text.replace(/\s+/g, ' ').trim(), 60)}"`;
}

function body(text: string): string {
  return escapeControls(text.replace(/\r\n/g, '\n')).replace(/\r/g, '\\u000d');
}

async function writeView(dir: string, name: string, text: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await writeFileAtomic(path.join(dir, name), text, 0o644, { durable: false });
  await prune(dir);
}

async function prune(dir: string): Promise<void> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.txt')).sort();
  for (const name of names.slice(0, Math.max(0, names.length - KEEP_VIEWS))) await rm(path.join(dir, name), { force: true });
}

function receivedStatus(m: MailRecord): string {
  return m.delivered ? `read${m.delivered.tick === undefined ? '' : ` in tick ${m.delivered.tick}`}` : 'new: comes with your next tick';
}

/** Pure: a received message as `ak-mail read` shows it. */
export function renderReceived(m: MailRecord): string {
  const kind = m.question ? `answers ${m.question.id}` : m.expects_reply ? 'asks' : m.reply_to ? `answers ${m.reply_to}` : 'says';
  const lines = [
    `${m.id}  ${m.sent}  from ${senderName(m.from)}  ${kind}  ${excerptOf(m.text)}  [${receivedStatus(m)}]`,
    `From:    ${m.from.kind === 'agent' ? `${m.from.name} (an instance on this host)` : senderName(m.from)}`,
    `To:      ${m.to}`,
    `Sent:    ${m.sent}`,
    `Id:      ${m.id}`,
    ...(m.reply_to ? [`Answers: ${m.reply_to}${m.question ? ` (you wrote: ${excerptOf(m.question.text)})` : ''}`] : []),
    `Status:  ${receivedStatus(m)}`,
    `Reply:   ak-mail reply ${m.id} "your answer"`,
    '',
    body(m.text),
  ];
  return lines.join('\n') + '\n';
}

/** Pure: a message this instance sent. */
export function renderSent(m: MailRecord, status: string): string {
  const lines = [
    `${m.id}  ${m.sent}  to ${m.to}  ${m.reply_to ? `answers ${m.reply_to}` : m.expects_reply ? 'asks' : 'says'}  ${excerptOf(m.text)}  [${status}]`,
    `To:      ${m.to}`,
    `Sent:    ${m.sent}`,
    `Id:      ${m.id}`,
    ...(m.reply_to ? [`Answers: ${m.reply_to}`] : []),
    `Status:  ${status}`,
    '',
    body(m.text),
  ];
  return lines.join('\n') + '\n';
}

/** Show a received message in the instance's view (its status changes when the model has it). */
export async function showReceived(paths: MailPaths, m: MailRecord): Promise<void> {
  await writeView(path.join(paths.view, 'inbox'), `${m.id}.txt`, renderReceived(m));
}

/** A withdrawn message leaves the instance's view of its inbox. */
export async function hideReceived(paths: MailPaths, id: string): Promise<void> {
  await rm(path.join(paths.view, 'inbox', `${path.basename(id)}.txt`), { force: true });
}

/** Show a sent message in the sender's view. */
export async function showSent(paths: MailPaths, m: MailRecord, status: string): Promise<void> {
  await writeView(path.join(paths.view, 'sent'), `${m.id}.txt`, renderSent(m, status));
}

/** A file name of the outbox as it may name a receipt (anything else made safe). */
export function receiptName(outboxName: string): string {
  return outboxName.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_').slice(0, 120) || '_';
}

/**
 * What the post office did with one file of the outbox. The first line starts with "sent" or
 * "refused"; a refused message's text follows, so nothing the agent wrote is lost.
 */
export async function showReceipt(paths: MailPaths, outboxName: string, receipt: { sent: MailRecord } | { refused: string; text?: string }): Promise<void> {
  const text =
    'sent' in receipt
      ? `sent ${receipt.sent.id} to ${receipt.sent.to} at ${receipt.sent.sent}\n`
      : `refused: ${oneLine(receipt.refused, 1000)}\n${receipt.text === undefined ? '' : `\nIts text, kept here:\n${body(receipt.text)}\n`}`;
  await writeView(path.join(paths.view, 'receipts'), `${receiptName(outboxName)}.txt`, text);
}

/** The view's folders, so the container sees them (empty) before the first message. */
export async function ensureView(paths: MailPaths): Promise<void> {
  for (const dir of ['inbox', 'sent', 'receipts']) await mkdir(path.join(paths.view, dir), { recursive: true, mode: 0o755 });
  await chmod(paths.view, 0o755).catch(() => {});
}
