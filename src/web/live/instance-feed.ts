import type { Instance } from '../../config/instance.js';
import { EventFollower, readEvents } from '../../observe/events/event-log.js';
import type { InstanceEvent } from '../../observe/events/event-schema.js';
import { sleep } from '../../util/sleep.js';
import { type TerminalSummary, type TtyActivity, applyEvent, readTerminals } from './terminal-list.js';
import { TerminalMirror } from './terminal-mirror.js';

const MIRROR_POLL_MS = 100;
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
 * Everything the web view follows of one instance while a page watches it: its terminals
 * (status files, registry, events, recordings), a mirror per terminal a page shows, and its
 * events. One loop per instance however many pages and terminals: HTTP/1.1 gives a page six
 * connections, and one stream per terminal froze the page at seven.
 */
export class InstanceFeed {
  terminals: TerminalSummary[] = [];
  readonly recent: LiveEvent[] = [];
  /** What started each tick (from tick.started events). */
  readonly triggers = new Map<number, string>();
  private readonly activity = new Map<number, TtyActivity>();
  private readonly mirrors = new Map<number, TerminalMirror>();
  private readonly listeners = new Set<FeedListener>();
  private readonly stop = new AbortController();
  private events: EventFollower | undefined;
  readonly ready: Promise<void>;

  constructor(readonly instance: Instance) {
    this.ready = this.start();
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
        await Promise.all([...this.mirrors.values()].map((m) => m.poll()));
      } catch {
        // A file read failed (a folder removed with its instance): try again at the next turn.
      }
      await sleep(MIRROR_POLL_MS, this.stop.signal);
    }
  }

  private async pollEvents(): Promise<void> {
    for (const event of (await this.events?.next(8 * 1024 * 1024)) ?? []) this.take(event, true);
  }

  private async refreshTerminals(): Promise<void> {
    const list = await readTerminals(this.instance, this.activity);
    for (const [tty, mirror] of this.mirrors) {
      const terminal = list.find((t) => t.tty === tty);
      if (!mirror.watched && !terminal) {
        mirror.dispose();
        this.mirrors.delete(tty);
      } else await mirror.follow(terminal?.recording);
    }
    if (JSON.stringify(list) === JSON.stringify(this.terminals)) return;
    this.terminals = list;
    for (const listener of this.listeners) listener.terminals?.(list);
  }

  listen(listener: FeedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The mirror of a terminal, following its recording. */
  async mirror(tty: number): Promise<TerminalMirror> {
    let mirror = this.mirrors.get(tty);
    if (!mirror) {
      mirror = new TerminalMirror(this.instance.paths.recordings);
      this.mirrors.set(tty, mirror);
      await mirror.follow(this.terminals.find((t) => t.tty === tty)?.recording);
    }
    return mirror;
  }

  close(): void {
    this.stop.abort();
    for (const mirror of this.mirrors.values()) mirror.dispose();
    this.mirrors.clear();
    this.listeners.clear();
  }
}
