import type { Instance } from '../config/instance.js';
import { containerView } from '../config/paths.js';
import { resolveInstance } from '../config/instance.js';
import { loadRegistry } from '../config/registry.js';
import { describeError, isCodedError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { appendEvent } from '../observe/events/event-log.js';
import { type AgentFiles, LocalAgentFiles } from '../util/agent-files.js';
import { Coalescer, watchFolder } from './folder-watch.js';
import { oneLine } from './framing.js';
import { SendRate, pairRefusal } from './mail-policy.js';
import { type MailRecord, OPERATOR, newMessageId } from './mail-record.js';
import { enqueue, findReceived, recordSent } from './mail-store.js';
import { installMailScript } from './mail-script.js';
import { ensureView, receiptName, showReceipt, showReceived, showSent } from './mail-view.js';
import { OUTBOX_NAME, parseOutboxMessage } from './outbox-message.js';

/**
 * The post office of one instance: it takes what the agent put in its `outbox/` (hostile
 * input: links, FIFOs, huge files, floods, any bytes in names and fields), checks each message
 * (size, the sending rate, the recipient exists and the operator's policy allows the pair),
 * stamps the true sender, and puts it in the recipient's host-private queue, where the
 * recipient's watch finds it. Nothing in the outbox does anything on the host beyond that.
 *
 * It runs in the sender's `kernel-runner watch`. Each file costs one unit of the sending rate
 * (`mail.send_per_minute`), valid or not; files beyond it wait in the outbox (nothing is
 * dropped), and while none may go the outbox is not even listed, so a flood costs the host
 * one listing per unit of rate. A refused file is removed, and its receipt keeps its text.
 */

const OUTBOX = 'outbox';

export interface PostOfficeOptions {
  /** The sending instance as watch last loaded it (its operator's mail settings). */
  readonly instance: () => Instance;
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
  readonly pollMs?: number;
  /**
   * The agent's files (util/agent-files.ts): default its data directory as a host folder; on a
   * remote engine the volume there, reached through the engine (sandbox/container/agent-files-for.ts).
   */
  readonly files?: AgentFiles;
}

export class PostOffice {
  private readonly rate: SendRate;
  private readonly runner = new Coalescer(() => this.collect());
  private watcher: { close(): void } | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  /** Files seen waiting in the outbox at the last look. */
  private waitingCount = 0;

  constructor(private readonly options: PostOfficeOptions) {
    this.rate = new SendRate(options.instance().config.mail.send_per_minute, Date.now());
  }

  private get files(): AgentFiles {
    return this.options.files ?? new LocalAgentFiles(this.me.paths.root);
  }

  private get me(): Instance {
    return this.options.instance();
  }

  get waiting(): number {
    return this.waitingCount;
  }

  /** Show the agent its (empty) mail and the `ak-mail` command, then take its outbox from now on. */
  async start(): Promise<void> {
    await prepareMailbox(this.me, this.files);
    // A folder on this host is watched (plus a poll); a volume on a remote engine is polled.
    this.watcher = this.files.local ? watchFolder(this.me.paths.root, OUTBOX, () => this.runner.kick(), this.options.pollMs ?? 2000) : pollEvery(() => this.runner.kick(), this.options.pollMs ?? 2000);
    this.runner.kick();
  }

  async stop(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    if (this.retry) clearTimeout(this.retry);
    await this.runner.idle();
  }

  /** Take what may go now (tests call it directly). */
  async collect(): Promise<void> {
    if (this.closed) return;
    const me = this.me;
    const now = Date.now();
    this.rate.setRate(me.config.mail.send_per_minute, now);
    if (this.rate.nextAt(now) > now) return this.later(this.rate.nextAt(now) - now);
    let names: string[];
    try {
      names = ((await this.files.names(OUTBOX)) ?? []).filter((n) => !n.startsWith('.'));
    } catch (error) {
      this.waitingCount = 0;
      this.options.logger.warn({ err: error }, `the outbox cannot be read: ${describeError(error)}`);
      return;
    }
    this.waitingCount = names.length;
    for (const name of names) {
      if (this.closed) return;
      if (!this.rate.take(Date.now())) return this.later(this.rate.nextAt(Date.now()) - Date.now());
      await this.take(name).catch((error: unknown) => this.options.logger.error({ err: error, file: oneLine(name) }, `the post office failed on an outbox file: ${describeError(error)}`));
      this.waitingCount--;
    }
  }

  private later(ms: number): void {
    if (this.retry || this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.runner.kick();
    }, Math.max(10, ms));
    this.retry.unref();
  }

  /** One file of the outbox: delivered, or refused with a receipt saying why. */
  private async take(name: string): Promise<void> {
    const me = this.me;
    const rel = `${OUTBOX}/${name}`;
    if (!OUTBOX_NAME.test(name)) return this.refuse(name, `the file name ${JSON.stringify(oneLine(name, 80))} is not one the post office takes (letters, digits, . _ -; ak-mail names its files)`);
    let data: Uint8Array | undefined;
    try {
      // A link, FIFO or device is refused without being followed or opened; a huge file without being read.
      data = await this.files.read(rel, { maxBytes: me.config.mail.max_bytes + 4096 });
    } catch (error) {
      if (isCodedError(error, 'UNTRUSTED_FILE') && !isEngineTrouble(error)) return this.refuse(name, error.message.replace(`${me.paths.root}/`, ''));
      throw error;
    }
    if (data === undefined) return;
    const parsed = parseOutboxMessage(data, me.config.mail.max_bytes);
    if (!parsed.ok) return this.refuse(name, parsed.reason, parsed.text);
    const message = parsed.message;
    let to = message.to;
    let question: MailRecord | undefined;
    if (message.replyTo) {
      question = await findReceived(me.paths.mail, message.replyTo);
      if (!question) return this.refuse(name, `${message.replyTo} is not a message you received (ak-mail list shows those)`, message.text, to);
      const asker = question.from.kind === 'agent' ? question.from.name : OPERATOR;
      if (to !== undefined && to !== asker) return this.refuse(name, `${message.replyTo} came from ${asker}: a reply goes to its sender, not to ${to}`, message.text, to);
      to = asker;
    }
    if (to === undefined) return this.refuse(name, 'no recipient', message.text);
    const record: MailRecord = {
      id: newMessageId(),
      from: { kind: 'agent', name: me.name },
      to,
      text: message.text,
      sent: new Date().toISOString(),
      ...(message.replyTo ? { reply_to: message.replyTo } : {}),
      ...(message.ask ? { expects_reply: true } : {}),
      ...(question ? { question: { id: question.id, sent: question.sent, text: question.text } } : {}),
    };
    if (to === OPERATOR) {
      await this.deliverToOperator(name, record);
      return;
    }
    const recipient = await this.recipient(to);
    if (typeof recipient === 'string') return this.refuse(name, recipient, message.text, to);
    // An answer to what the recipient itself asked needs no more leave: the asker chose to write to this instance.
    const answersRecipient = question?.from.kind === 'agent' && question.from.name === recipient.name;
    const refusal = answersRecipient ? undefined : pairRefusal({ name: me.name, mail: me.config.mail }, { name: recipient.name, mail: recipient.config.mail });
    if (refusal) return this.refuse(name, refusal, message.text, to);
    await enqueue(recipient.paths.mail, record);
    await showReceived(recipient.paths.mail, record).catch((error: unknown) => this.options.logger.warn({ err: error }, `the recipient's view of a message could not be written: ${describeError(error)}`));
    await appendEvent(recipient.paths.events, { type: 'message.received', id: record.id, from: me.name, to, ...(record.reply_to ? { replyTo: record.reply_to } : {}) });
    await this.sent(name, record, `queued for ${to}`);
  }

  /** An instance on this host by name, or why it cannot take mail. */
  private async recipient(name: string): Promise<Instance | string> {
    const registry = await loadRegistry(this.options.env);
    if (!Object.hasOwn(registry.instances, name)) return `there is no instance named ${name} on this host`;
    try {
      return await resolveInstance(name, this.options.env);
    } catch (error) {
      this.options.logger.warn({ err: error, to: name }, `a recipient cannot be used: ${describeError(error)}`);
      return `the instance ${name} cannot take mail now (its configuration or folder is broken; the operator can see why in its log)`;
    }
  }

  private async deliverToOperator(name: string, record: MailRecord): Promise<void> {
    await this.sent(name, record, 'kept for the operator (kernel-runner mail)');
  }

  private async sent(name: string, record: MailRecord, status: string): Promise<void> {
    const me = this.me;
    await recordSent(me.paths.mail, record);
    await this.files.remove(`${OUTBOX}/${name}`);
    await showSent(me.paths.mail, record, status);
    await showReceipt(me.paths.mail, name, { sent: record });
    await appendEvent(me.paths.events, { type: 'message.sent', id: record.id, from: me.name, to: record.to, ...(record.reply_to ? { replyTo: record.reply_to } : {}) });
    this.options.logger.info({ id: record.id, to: record.to, replyTo: record.reply_to }, `message ${record.id} from ${me.name} to ${record.to}`);
  }

  /** A file that does not go: removed from the outbox, with a receipt that keeps its text. */
  private async refuse(name: string, reason: string, text?: string, to?: string): Promise<void> {
    const me = this.me;
    await this.files.remove(`${OUTBOX}/${name}`).catch((error: unknown) =>
      this.options.logger.warn({ err: error }, `a refused outbox file could not be removed: ${describeError(error)}`),
    );
    await showReceipt(me.paths.mail, name, { refused: reason, ...(text === undefined ? {} : { text }) });
    await appendEvent(me.paths.events, { type: 'message.refused', from: me.name, ...(to ? { to } : {}), reason: oneLine(reason, 500), file: receiptName(name) });
    this.options.logger.warn({ file: receiptName(name), to, reason: oneLine(reason, 500) }, `an outbox message was refused: ${oneLine(reason, 500)}`);
  }
}

/** The agent's mail view and `ak-mail`, where its terminals find them (the host-private shell folder, read-only there). */
export async function prepareMailbox(instance: Instance, files: AgentFiles = new LocalAgentFiles(instance.paths.root)): Promise<void> {
  const { paths } = instance;
  await ensureView(paths.mail);
  // Where the terminals run: the container sees the shell folder at <data>/tmp/kernel; the host backend has no view.
  const inContainer = instance.config.container.backend !== 'host';
  const view = inContainer ? containerView(paths, paths.mail.view) : paths.mail.view;
  await installMailScript(paths.mail.bin, { instance: instance.name, view, outbox: paths.outbox });
  await files.makeDirs(OUTBOX).catch(() => {});
}

/** A poll alone, for a folder that cannot be watched from here. */
function pollEvery(onTick: () => void, ms: number): { close(): void } {
  const timer = setInterval(onTick, ms);
  timer.unref();
  return { close: () => clearInterval(timer) };
}

/** The engine could not be reached (not a file the agent made): the file waits, it is not refused. */
function isEngineTrouble(error: { message: string }): boolean {
  return /could not be reached through the engine|could not be read through the engine/.test(error.message);
}
