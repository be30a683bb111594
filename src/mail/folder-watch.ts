import { type FSWatcher, watch as fsWatch } from 'node:fs';
import { openUntrustedDir } from '../util/untrusted-dir.js';
import { sleep } from '../util/sleep.js';

/**
 * Call `onChange` when the folder `<root>/<rel>` may have changed: fs.watch for speed, plus a
 * poll for filesystems where watching misses events (network mounts, bind mounts from
 * containers). When `rel` is in the data directory the watch is set on the folder pinned without
 * following links (the container may have made it a link to a busy host folder); a folder swapped
 * in later is seen by the poll. `onChange` must be cheap: a flood of files calls it for each.
 */
export function watchFolder(root: string, rel: string, onChange: () => void, pollMs = 2000): { close(): void } {
  let watcher: FSWatcher | undefined;
  let starting = false;
  let closed = false;
  const startWatcher = async () => {
    if (watcher || starting) return;
    starting = true;
    const dir = await openUntrustedDir(root, rel).catch(() => undefined);
    try {
      if (!dir || closed) return;
      watcher = fsWatch(dir.self, { persistent: false }, () => onChange());
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      watcher = undefined;
    } finally {
      starting = false;
      await dir?.close();
    }
  };
  void startWatcher();
  const timer = setInterval(() => {
    // The folder may be created (or recreated) after the watch started.
    void startWatcher();
    onChange();
  }, pollMs);
  timer.unref();
  return {
    close() {
      closed = true;
      clearInterval(timer);
      watcher?.close();
    },
  };
}

/**
 * Run `work` whenever `kick()` is called, never twice at once: kicks during a run make one
 * more run after it, however many there were, and not sooner than `gapMs` after it (a flood of
 * kicks costs at most one run per gap).
 */
export class Coalescer {
  private dirty = false;
  private running: Promise<void> | undefined;

  constructor(
    private readonly work: () => Promise<void>,
    private readonly gapMs = 0,
  ) {}

  kick(): void {
    this.dirty = true;
    this.running ??= this.drain();
  }

  /** Resolves once no run is in progress. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    try {
      // No await between the last check of `dirty` and clearing `running`: no kick is missed.
      while (this.dirty) {
        this.dirty = false;
        await this.work().catch(() => {});
        if (this.dirty && this.gapMs > 0) await sleep(this.gapMs);
      }
    } finally {
      this.running = undefined;
    }
  }
}
