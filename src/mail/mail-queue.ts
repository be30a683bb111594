import type { Instance } from '../config/instance.js';
import { instancePaths } from '../config/paths.js';
import { loadRegistry } from '../config/registry.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { appendEvent } from '../observe/events/event-log.js';
import { Coalescer } from './folder-watch.js';
import { formatInboxNote, formatMail } from './mail-format.js';
import { type MailRecord, senderName } from './mail-record.js';
import { markDelivered as markMailDelivered, noteHanded, readRecords } from './mail-store.js';
import { showReceived, showSent } from './mail-view.js';
import { type InboxNote, countPending, markDelivered as markNoteDelivered, readPending } from './inbox.js';
import { SerialQueue } from '../util/serial-queue.js';

/**
 * What waits for an instance's model, and what it has had: its post-office queue (the
 * operator's and other agents' messages, host-private) and the notes its own container left in
 * `inbox/`. Watch hands them to a tick (at most `mail.max_per_tick` a tick) and counts one
 * delivered only when the tick says its model has it in context (tick.ts `onInContext`); one a
 * tick had but its model never did stays queued and is marked redelivered in the next tick.
 */

type Item = { kind: 'mail'; record: MailRecord; text: string } | { kind: 'note'; note: InboxNote; text: string };

export class MailQueue {
  /** What `next` offered last, by the exact text (the tick names messages back by it). */
  private offered = new Map<string, Item>();
  /** What the current tick took. */
  private handed = new Map<string, Item>();
  private confirmed = new Set<string>();
  /** Ticks that had a note and ended before their model did (notes live in the agent's folder: remembered here). */
  private readonly noteTicks = new Map<string, number[]>();
  /** Deliveries recorded one at a time, in the order the tick reported them. */
  private readonly confirming = new SerialQueue();
  private waitingCount = 0;
  private readonly counter = new Coalescer(() => this.recount(), 250);

  constructor(
    private readonly instance: () => Instance,
    private readonly logger: Logger,
    private readonly env: NodeJS.ProcessEnv | undefined,
  ) {}

  /** How many messages and notes wait (at the last look), the current tick's not counted. */
  get waiting(): number {
    return this.waitingCount;
  }

  /** Count again what waits (coalesced: a flood of changes costs one count at a time). */
  refreshCount(): void {
    this.counter.kick();
  }

  private async recount(): Promise<void> {
    this.waitingCount = Math.max(0, (await countWaiting(this.instance().paths)) - this.handed.size);
  }

  /**
   * What waits and the current tick has not taken, as the texts the agent reads: every operator
   * message first (the operator's word is never held back by what others sent), then peers'
   * messages and the agent's own inbox notes, oldest first, at most what a tick may still take of
   * those (`mail.max_per_tick` counts them only).
   */
  async next(): Promise<string[]> {
    const instance = this.instance();
    const handed = [...this.handed.values()];
    const room = Math.max(0, instance.config.mail.max_per_tick - handed.filter((item) => !fromOperator(item)).length);
    const taken = new Set(handed.map(keyOf));
    // The queue is host-private and its senders are rate-limited (mail.send_per_minute): read it whole to find the operator's.
    const { records } = await readRecords(instance.paths.mail.queue);
    const fresh = records.filter((record) => !taken.has(record.id));
    const items: Item[] = [
      ...fresh.filter((record) => record.from.kind === 'operator'),
      ...fresh.filter((record) => record.from.kind !== 'operator').slice(0, room),
    ].map((record) => ({ kind: 'mail', record, text: formatMail(record) }));
    const others = items.length - fresh.filter((record) => record.from.kind === 'operator').length;
    if (others < room) {
      const notes = await readPending(
        instance.paths,
        (file, reason) => this.logger.error({ file, reason }, `an inbox file is not a valid note and was moved to inbox/invalid/: ${reason}`),
        { limit: room - others, skip: taken, maxBytes: instance.config.mail.max_bytes },
      );
      for (const note of notes) items.push({ kind: 'note', note, text: formatInboxNote(note.name, note.text, this.noteTicks.get(note.name)) });
    }
    this.offered = new Map(items.map((item) => [item.text, item]));
    await this.recount();
    return items.map((item) => item.text);
  }

  /** The tick took this text (from `next`): it is the tick's, until its model has it or the tick ends. */
  taken(text: string): void {
    const item = this.offered.get(text);
    if (item) this.handed.set(text, item);
    this.waitingCount = Math.max(0, this.waitingCount - 1);
  }

  /** The tick's model has had these texts in its context: delivered, once. */
  inContext(texts: readonly string[], tick: number | undefined): void {
    for (const text of texts) {
      // A tick may say so before watch has noted it took the text.
      const item = this.handed.get(text) ?? this.offered.get(text);
      if (!item || this.confirmed.has(text)) continue;
      this.handed.set(text, item);
      this.confirmed.add(text);
      void this.confirming
        .run(() => this.delivered(item, tick))
        .catch((error: unknown) => this.logger.error({ err: error }, `a delivered message could not be recorded as such: ${describeError(error)}`));
    }
  }

  /** The tick ended: what its model never had waits for the next tick, marked redelivered. */
  async endTick(tick: number | undefined): Promise<void> {
    const { paths } = this.instance();
    const unread = tick === undefined ? [] : [...this.handed].filter(([text]) => !this.confirmed.has(text)).map(([, item]) => ({ item, tick }));
    // In the same queue as the deliveries: a record is never rewritten as handed while (or after)
    // a delivery moves it out of the queue, which would put a delivered message back.
    await this.confirming.run(async () => {
      for (const { item, tick } of unread) {
        if (item.kind === 'mail') await noteHanded(paths.mail, item.record.id, tick).catch((error: unknown) => this.logger.warn({ err: error }, 'could not mark a message redelivered'));
        else this.noteTicks.set(item.note.name, [...(this.noteTicks.get(item.note.name) ?? []), tick]);
        this.logger.warn({ id: keyOf(item), tick }, 'the tick ended before its model had a message: it waits for the next tick');
      }
    });
    this.handed = new Map();
    this.confirmed = new Set();
    this.offered = new Map();
    await this.recount();
  }

  private async delivered(item: Item, tick: number | undefined): Promise<void> {
    const instance = this.instance();
    if (item.kind === 'note') {
      this.noteTicks.delete(item.note.name);
      await markNoteDelivered(instance.paths, item.note, tick).catch((error: unknown) => {
        this.logger.error({ err: error, note: item.note.name }, `a delivered note stays in the inbox: ${describeError(error)}`);
      });
      return;
    }
    const done = await markMailDelivered(instance.paths.mail, item.record.id, tick);
    if (!done) return;
    const from = senderName(done.from);
    this.logger.info({ id: done.id, from, tick }, `message ${done.id} from ${from} delivered`);
    await showReceived(instance.paths.mail, done);
    await appendEvent(instance.paths.events, {
      type: 'message.delivered',
      id: done.id,
      from,
      to: instance.name,
      ...(done.reply_to ? { replyTo: done.reply_to } : {}),
      ...(done.handed?.length ? { redelivered: done.handed.length } : {}),
      ...(tick === undefined ? {} : { tick }),
    });
    if (done.from.kind === 'agent') await this.tellSender(done.from.name, done, tick);
  }

  /** The sender's view of what it sent says it was read. */
  private async tellSender(name: string, record: MailRecord, tick: number | undefined): Promise<void> {
    const entry = (await loadRegistry(this.env)).instances[name];
    if (!entry) return;
    const sender = instancePaths(name, entry.dir, this.env);
    await showSent(sender.mail, record, `${this.instance().name} has read it${tick === undefined ? '' : ` (its tick ${tick})`}`);
  }
}

/** What waits for an instance's model: its post-office queue and the notes in its inbox. */
export async function countWaiting(paths: Instance['paths']): Promise<number> {
  const queued = (await readRecords(paths.mail.queue, 0)).total;
  return queued + (await countPending(paths).catch(() => 0));
}

function fromOperator(item: Item): boolean {
  return item.kind === 'mail' && item.record.from.kind === 'operator';
}

function keyOf(item: Item): string {
  return item.kind === 'mail' ? item.record.id : item.note.name;
}
