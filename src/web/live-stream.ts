import type http from 'node:http';
import path from 'node:path';
import { sleep } from '../util/sleep.js';
import { openSse } from './sse.js';
import { TranscriptParser } from './transcript.js';
import { type InstanceSummary, listTicks } from './web-data.js';
import type { InstanceFeed } from './live/instance-feed.js';
import type { LiveHub } from './live-hub.js';
import { LineFollower } from '../observe/events/line-follower.js';
import { TerminalScreen } from './live/terminal-screen.js';

/** Output sent together (one message per terminal per flush). */
const FLUSH_MS = 40;
/** Output queued for one terminal past which the page gets a fresh screen instead (a flood, a slow page). */
const RESYNC_BYTES = 256 * 1024;
const INSTANCES_POLL_MS = 2000;
const SLOW_POLL_MS = 1000;

export interface LiveTopics {
  instances: boolean;
  /** Instances whose terminal lists (and screens, unless `screens` is false) the page shows; '*' every one. */
  terminals: string[] | '*';
  screens: boolean;
  /** One terminal shown large, with its history: `instance/tty`. */
  focus?: { instance: string; tty: number };
  events: string[] | '*';
  ticks?: string;
  transcript?: { instance: string; tick: number };
}

/** Pure: the topics of a stream request (`/api/live?instances=1&terminals=*&focus=a/3&events=a&ticks=a&transcript=a/12`). */
export function parseTopics(query: URLSearchParams): LiveTopics {
  const list = (key: string): string[] | '*' => {
    const value = query.get(key) ?? '';
    return value === '*' ? '*' : value.split(',').filter(Boolean);
  };
  const pair = (key: string): { instance: string; n: number } | undefined => {
    const match = /^(.+)\/(\d{1,6})$/.exec(query.get(key) ?? '');
    return match ? { instance: match[1]!, n: Number(match[2]) } : undefined;
  };
  const focus = pair('focus');
  const transcript = pair('transcript');
  return {
    instances: query.get('instances') === '1',
    terminals: list('terminals'),
    screens: query.get('screens') !== '0',
    ...(focus && focus.n < 100 ? { focus: { instance: focus.instance, tty: focus.n } } : {}),
    events: list('events'),
    ...(query.get('ticks') ? { ticks: query.get('ticks')! } : {}),
    ...(transcript ? { transcript: { instance: transcript.instance, tick: transcript.n } } : {}),
  };
}

/**
 * The page's one stream: every terminal and instance it shows, multiplexed over one server-sent
 * event stream (`instances`, `terminals`, `screen`, `out`, `size`, `event`, `ticks`, `transcript`).
 * A terminal starts with its screen as the kernel's emulator holds it; output then follows, gathered
 * every 40 ms; a terminal whose output piles up (a flood, a page that reads slowly) gets a fresh screen instead.
 */
export async function liveStream(hub: LiveHub, topics: LiveTopics, req: http.IncomingMessage, res: http.ServerResponse, listInstances: () => Promise<InstanceSummary[]>): Promise<void> {
  const { send, signal, writable } = openSse(req, res);
  const feeds = new Map<string, InstanceFeed>();
  const cleanups: Array<() => void> = [];
  const queued = new Map<string, { parts: string[]; bytes: number }>();
  const resyncs = new Set<string>();

  const named = async (list: string[] | '*'): Promise<string[]> => (list === '*' ? hub.names() : list);
  const feedOf = async (name: string): Promise<InstanceFeed | undefined> => {
    if (feeds.has(name)) return feeds.get(name);
    const feed = await hub.acquire(name);
    if (feed) {
      feeds.set(name, feed);
      cleanups.push(() => hub.release(feed));
    }
    return feed;
  };

  // Terminals: the list, and each screen shown, from the kernel.
  const watched = new Map<string, TerminalScreen>();
  const watch = (feed: InstanceFeed, tty: number, history: boolean): void => {
    const id = `${feed.instance.name}/${tty}`;
    if (watched.has(id) || signal.aborted) return;
    const screen = new TerminalScreen({ instance: feed.instance.name, socketPath: feed.socketPath, tty }, history, {
      screen(snapshot) {
        // What was queued belongs to the screen before: the new one holds it.
        queued.delete(id);
        resyncs.delete(id);
        send('screen', JSON.stringify({ id, ...snapshot }));
      },
      output(data) {
        const q = queued.get(id) ?? { parts: [], bytes: 0 };
        q.parts.push(data);
        q.bytes += data.length;
        queued.set(id, q);
        if (q.bytes > RESYNC_BYTES) resyncs.add(id);
      },
    });
    watched.set(id, screen);
    cleanups.push(() => screen.stop());
  };
  const resync = (id: string): void => {
    queued.delete(id);
    watched.get(id)?.resync();
  };
  const flushTerminal = (id: string): void => {
    const q = queued.get(id);
    if (!q) return;
    queued.delete(id);
    send('out', JSON.stringify({ id, data: q.parts.join('') }));
  };

  const showTerminals = async (feed: InstanceFeed, screens: boolean): Promise<void> => {
    const shown = async (list: typeof feed.terminals): Promise<void> => {
      send('terminals', JSON.stringify({ instance: feed.instance.name, terminals: list }));
      if (screens) for (const t of list) watch(feed, t.tty, topics.focus?.instance === feed.instance.name && topics.focus.tty === t.tty);
    };
    cleanups.push(feed.listen({ terminals: (list) => void shown(list) }));
    await shown(feed.terminals);
  };

  for (const name of await named(topics.terminals)) {
    const feed = await feedOf(name);
    if (feed) await showTerminals(feed, topics.screens);
  }
  if (topics.focus && !watched.has(`${topics.focus.instance}/${topics.focus.tty}`)) {
    const feed = await feedOf(topics.focus.instance);
    if (feed) {
      if (topics.terminals === '*' || !topics.terminals.includes(feed.instance.name)) await showTerminals(feed, false);
      watch(feed, topics.focus.tty, true);
    }
  }

  // Events: the recent ones, then each new one.
  for (const name of await named(topics.events)) {
    const feed = await feedOf(name);
    if (!feed) continue;
    for (const event of feed.recent) send('event', JSON.stringify(event));
    cleanups.push(feed.listen({ event: (event) => send('event', JSON.stringify(event)) }));
  }

  const loops: Array<Promise<void>> = [];
  if (topics.instances) loops.push(everyChange(INSTANCES_POLL_MS, signal, () => listInstances(), (list) => send('instances', JSON.stringify(list))));
  if (topics.ticks) {
    const feed = await feedOf(topics.ticks);
    if (feed) loops.push(everyChange(SLOW_POLL_MS, signal, () => listTicks(feed.instance, feed.triggers), (ticks) => send('ticks', JSON.stringify({ instance: feed.instance.name, ticks }))));
  }
  if (topics.transcript) {
    const feed = await feedOf(topics.transcript.instance);
    if (feed) loops.push(followTranscript(feed, topics.transcript.tick, signal, (data) => send('transcript', data)));
  }

  // Output goes out in batches, and not faster than the page reads it.
  while (!signal.aborted) {
    await sleep(FLUSH_MS, signal);
    if (!writable()) continue;
    for (const id of [...resyncs]) {
      resyncs.delete(id);
      resync(id);
    }
    for (const id of [...queued.keys()]) flushTerminal(id);
  }
  for (const cleanup of cleanups) cleanup();
  await Promise.all(loops);
}

/** Call `read` every `ms`, and `send` what it gives whenever that changed. */
async function everyChange<T>(ms: number, signal: AbortSignal, read: () => Promise<T>, send: (value: T) => void): Promise<void> {
  let last = '';
  while (!signal.aborted) {
    try {
      const value = await read();
      const text = JSON.stringify(value);
      if (text !== last) {
        last = text;
        send(value);
      }
    } catch {
      // Unreadable for now (a state file being replaced): the next turn tells.
    }
    await sleep(ms, signal);
  }
}

/** A tick's transcript as it grows: items added or changed, with the summary. */
async function followTranscript(feed: InstanceFeed, tick: number, signal: AbortSignal, send: (data: string) => void): Promise<void> {
  const file = feed.instance.paths.tickLog(tick);
  let follower = new LineFollower(path.dirname(file), path.basename(file));
  let parser = new TranscriptParser();
  let missing = true;
  while (!signal.aborted) {
    const got = await follower.read().catch(() => undefined);
    if (got?.restarted) {
      parser = new TranscriptParser();
      follower = new LineFollower(path.dirname(file), path.basename(file), 0);
      continue;
    }
    if (got && (got.lines.length > 0 || missing)) {
      missing = false;
      const changed = new Map<number, unknown>();
      for (const line of got.lines) for (const item of parser.push(line)) changed.set(item.index, item);
      send(JSON.stringify({ instance: feed.instance.name, tick, items: [...changed.values()], summary: parser.summary }));
    } else if (!got && missing) {
      send(JSON.stringify({ instance: feed.instance.name, tick, missing: true }));
      missing = false;
    }
    await sleep(500, signal);
  }
}
