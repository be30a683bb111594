import type { Instance } from '../../config/instance.js';
import { EventFollower, readEvents } from '../../observe/events/event-log.js';
import type { InstanceEvent } from '../../observe/events/event-schema.js';
import { kernelSocketPath } from '../../kernel/socket-path.js';
import { sleep } from '../../util/sleep.js';
import { type TerminalSummary, type TtyActivity, applyEvent, readTerminals } from './terminal-list.js';

const EVENTS_POLL_MS = 250;
const TERMINALS_POLL_MS = 1000;
/** Events kept for a page that opens (the log keeps the rest: agent-kernel events). */
const RECENT_EVENTS = 500;

export type LiveEvent = InstanceEvent & { instance: string };

export interface FeedListener {
  terminals?(list: TerminalSummary[]): void;
  event?(event: LiveEvent): void;
}

/**
 * What the web view follows of one instance while a page watches it: its terminals (status
 * files, registry, events, recordings) and its events, in one loop however many pages watch.
 * The screens come from the instance's kernel (terminal-screen.ts, at `socketPath`).
 */
export class InstanceFeed {
  terminals: TerminalSummary[] = [];
  readonly recent: LiveEvent[] = [];
  /** What started each tick (from tick.started events). */
  readonly triggers = new Map<number, string>();
  private readonly activity = new Map<number, TtyActivity>();
  private readonly listeners = new Set<FeedListener>();
  private readonly stop = new AbortController();
  private events: EventFollower | undefined;
  readonly ready: Promise<void>;

  constructor(readonly instance: Instance) {
    this.ready = this.start();
  }

  /** Where the instance's kernel answers for its screens and keys. */
  get socketPath(): string {
    return kernelSocketPath(this.instance.paths.stateRoot);
  }

  private async start(): Promise<void> {
    const { events, offset } = await readEvents(this.instance.paths.events);
    for (const event of events) this.take(event, false);
    this.events = new EventFollower(this.instance.paths.events, offset);
    await this.refreshTerminals();
    void this.loop();
  }

  private take(event: InstanceEvent, tell: boolean): void {
    applyEvent(this.activity, event);
    if (event.type === 'tick.started' && event.tick !== undefined && event.trigger) this.triggers.set(event.tick, event.trigger);
    const live = { ...event, instance: this.instance.name };
    this.recent.push(live);
    if (this.recent.length > RECENT_EVENTS) this.recent.splice(0, this.recent.length - RECENT_EVENTS);
    if (tell) for (const listener of this.listeners) listener.event?.(live);
  }

  private async loop(): Promise<void> {
    let eventsAt = 0;
    let terminalsAt = 0;
    while (!this.stop.signal.aborted) {
      const now = Date.now();
      try {
        if (now - eventsAt >= EVENTS_POLL_MS) {
          eventsAt = now;
          await this.pollEvents();
        }
        if (now - terminalsAt >= TERMINALS_POLL_MS) {
          terminalsAt = now;
          await this.refreshTerminals();
        }
      } catch {
        // A file read failed (a folder removed with its instance): try again at the next turn.
      }
      await sleep(EVENTS_POLL_MS, this.stop.signal);
    }
  }

  private async pollEvents(): Promise<void> {
    for (const event of (await this.events?.next(8 * 1024 * 1024)) ?? []) this.take(event, true);
  }

  private async refreshTerminals(): Promise<void> {
    const list = await readTerminals(this.instance, this.activity);
    if (JSON.stringify(list) === JSON.stringify(this.terminals)) return;
    this.terminals = list;
    for (const listener of this.listeners) listener.terminals?.(list);
  }

  listen(listener: FeedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.stop.abort();
    this.listeners.clear();
  }
}
