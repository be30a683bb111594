import { loadRegistry } from '../config/registry.js';
import { instanceByName } from './web-data.js';
import { InstanceFeed } from './live/instance-feed.js';

/** How long a feed nobody watches stays (a page moving between views keeps its mirrors). */
const LINGER_MS = 30_000;

/** The instance feeds of the web server, shared by every page and released when none watches. */
export class LiveHub {
  private readonly feeds = new Map<string, { feed: InstanceFeed; users: number; linger?: NodeJS.Timeout }>();

  /** A feed for a registered instance (undefined when there is none of that name), until `release`. */
  async acquire(name: string): Promise<InstanceFeed | undefined> {
    let entry = this.feeds.get(name);
    if (!entry) {
      const instance = await instanceByName(name).catch(() => undefined);
      if (!instance) return undefined;
      entry = this.feeds.get(name) ?? { feed: new InstanceFeed(instance), users: 0 };
      this.feeds.set(name, entry);
    }
    entry.users++;
    if (entry.linger) clearTimeout(entry.linger);
    entry.linger = undefined;
    await entry.feed.ready.catch(() => {});
    return entry.feed;
  }

  release(feed: InstanceFeed): void {
    const entry = this.feeds.get(feed.instance.name);
    if (!entry || entry.feed !== feed) return;
    entry.users--;
    if (entry.users > 0) return;
    entry.linger = setTimeout(() => {
      if (entry.users > 0) return;
      entry.feed.close();
      this.feeds.delete(feed.instance.name);
    }, LINGER_MS);
  }

  /** Names of every registered instance. */
  async names(): Promise<string[]> {
    const registry = await loadRegistry();
    return Object.keys(registry.instances).sort();
  }

  close(): void {
    for (const entry of this.feeds.values()) {
      if (entry.linger) clearTimeout(entry.linger);
      entry.feed.close();
    }
    this.feeds.clear();
  }
}
