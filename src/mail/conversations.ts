import type { Instance } from '../config/instance.js';
import { instancePaths } from '../config/paths.js';
import { loadRegistry } from '../config/registry.js';
import { oneLine } from './framing.js';
import { type MailRecord, OPERATOR, senderName } from './mail-record.js';
import { findReceived, readRecords } from './mail-store.js';

/**
 * An instance's conversations for people (`kernel-runner mail <name>`): what it received and
 * what it sent, oldest first, each with who, when, what it answers, and whether its recipient's
 * model has had it. Read from the host-private records only.
 */

export interface MailLine {
  readonly id: string;
  readonly sent: string;
  readonly from: string;
  readonly to: string;
  readonly replyTo?: string;
  readonly asks: boolean;
  readonly text: string;
  /** "delivered in tick 4", "queued", "withdrawn by the operator", "kept for the operator", or "unknown" (the recipient's records are gone). */
  readonly status: string;
}

export const WITHDRAWN = 'withdrawn by the operator';

function statusOf(record: MailRecord | undefined): string {
  if (!record) return 'unknown';
  if (!record.delivered) return record.handed?.length ? `queued (redelivered after tick ${record.handed.join(', ')})` : 'queued';
  return `delivered${record.delivered.tick === undefined ? '' : ` in tick ${record.delivered.tick}`} (${record.delivered.time})`;
}

function line(record: MailRecord, status: string): MailLine {
  return {
    id: record.id,
    sent: record.sent,
    from: senderName(record.from),
    to: record.to,
    ...(record.reply_to ? { replyTo: record.reply_to } : {}),
    asks: record.expects_reply === true,
    text: record.text,
    status,
  };
}

/** What `instance` received and sent, oldest first. */
export async function conversations(instance: Instance, env: NodeJS.ProcessEnv = process.env): Promise<MailLine[]> {
  const { mail } = instance.paths;
  const received = [
    ...[...(await readRecords(mail.queue)).records, ...(await readRecords(mail.delivered)).records].map((r) => line(r, statusOf(r))),
    ...(await readRecords(mail.withdrawn)).records.map((r) => line(r, WITHDRAWN)),
  ];
  const registry = await loadRegistry(env);
  const sent: MailLine[] = [];
  for (const record of (await readRecords(mail.sent)).records) {
    if (record.to === OPERATOR) {
      sent.push(line(record, 'kept for the operator'));
      continue;
    }
    const entry = registry.instances[record.to];
    const theirs = entry ? await findReceived(instancePaths(record.to, entry.dir, env).mail, record.id) : undefined;
    sent.push(line(record, statusOf(theirs)));
  }
  return [...received, ...sent].sort((a, b) => a.id.localeCompare(b.id));
}

/** Pure: the lines as people read them (one line each; `kernel-runner mail --json` has the whole texts). */
export function formatConversations(lines: readonly MailLine[]): string {
  if (lines.length === 0) return 'No messages yet.';
  return lines
    .map((l) => {
      const what = l.replyTo ? `answers ${l.replyTo}` : l.asks ? 'asks' : 'says';
      return `${l.sent}  ${l.id}  ${l.from} -> ${l.to}  ${what}  "${oneLine(l.text.replace(/\s+/g, ' ').trim(), 60)}"  ${l.status}`;
    })
    .join('\n');
}
