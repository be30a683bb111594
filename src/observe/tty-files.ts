import { appendFile, copyFile, mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { TTY_STATUS_FILE, type TtyStatusFile } from '../config/tty-status-file.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import type { Row } from './screen-source.js';

export type { TtyStatusFile } from '../config/tty-status-file.js';

export interface TtySnapshot {
  screen: string;
  screenAnsi: string;
  status: TtyStatusFile;
}

/** How often the screen and status files are rewritten while output flows. */
export const SNAPSHOT_INTERVAL_MS = 250;

/**
 * The files of one terminal in `<state>/sessions/tty_N/` (shown read-only at `<data>/tmp/sessions`): `screen`, `screen.ansi` and
 * `status` rewritten atomically at most every SNAPSHOT_INTERVAL_MS; `raw` (every byte,
 * rotated to `raw.1` past its cap) and `scrollback` (rows that left the screen) appended.
 */
export class TtyFiles {
  readonly dir: string;
  readonly scrollback: string;
  readonly screen: string;
  private rawChunks: Buffer[] = [];
  private rawSize = -1;
  private scrollbackText: string[] = [];
  private scrollbackHasText = false;
  /** Rows below this are in the scrollback file. */
  scrollbackRows: number;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    dir: string,
    private readonly rawMaxBytes: number,
    private readonly snapshot: () => TtySnapshot,
    options: { scrollbackRows: number; scrollbackHasText: boolean },
  ) {
    this.dir = dir;
    this.scrollback = path.join(dir, 'scrollback');
    this.screen = path.join(dir, 'screen');
    this.scrollbackRows = options.scrollbackRows;
    this.scrollbackHasText = options.scrollbackHasText;
  }

  static async prepare(dir: string): Promise<{ scrollbackHasText: boolean }> {
    await mkdir(dir, { recursive: true });
    const size = await stat(path.join(dir, 'scrollback')).then(
      (s) => s.size,
      () => 0,
    );
    return { scrollbackHasText: size > 0 };
  }

  appendRaw(data: Buffer): void {
    this.rawChunks.push(data);
    this.schedule();
  }

  /** Rows that left the screen, oldest first; rows already in the file are skipped. */
  appendRows(rows: readonly Row[]): void {
    let text = '';
    for (const row of rows) {
      if (row.abs < this.scrollbackRows) continue;
      text += (row.wrapped || !this.scrollbackHasText ? '' : '\n') + row.text;
      this.scrollbackHasText = true;
      this.scrollbackRows = row.abs + 1;
    }
    if (text) {
      this.scrollbackText.push(text);
      this.schedule();
    }
  }

  /** Something changed: rewrite the snapshot soon (not on every byte). */
  schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, SNAPSHOT_INTERVAL_MS);
  }

  /** Write everything pending now. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const raw = this.rawChunks;
    this.rawChunks = [];
    const scrollback = this.scrollbackText.join('');
    this.scrollbackText = [];
    const snapshot = this.closed ? undefined : this.snapshot();
    this.chain = this.chain
      .then(async () => {
        await mkdir(this.dir, { recursive: true });
        if (raw.length > 0) await this.writeRaw(Buffer.concat(raw));
        if (scrollback) await appendFile(this.scrollback, scrollback);
        if (snapshot) {
          await writeFileAtomic(this.screen, `${snapshot.screen}\n`);
          await writeFileAtomic(path.join(this.dir, 'screen.ansi'), snapshot.screenAnsi);
          await writeFileAtomic(path.join(this.dir, TTY_STATUS_FILE), `${JSON.stringify(snapshot.status, null, 2)}\n`);
        }
      })
      .catch(() => {
        // A full disk must not take the terminal down; the next flush tries again.
      });
    return this.chain;
  }

  /** Copy the scrollback plus the final screen to `archivePath`, then remove the live files. */
  async archive(archivePath: string, finalRows: readonly Row[]): Promise<void> {
    this.appendRows(finalRows);
    await this.flush();
    this.closed = true;
    await mkdir(path.dirname(archivePath), { recursive: true });
    await copyFile(this.scrollback, archivePath).catch(async () => writeFileAtomic(archivePath, ''));
    await rm(this.dir, { recursive: true, force: true });
  }

  /** Stop writing (the server is detaching); pending data is written first. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  private async writeRaw(data: Buffer): Promise<void> {
    const file = path.join(this.dir, 'raw');
    if (this.rawSize < 0) {
      this.rawSize = await stat(file).then(
        (s) => s.size,
        () => 0,
      );
    }
    if (this.rawSize + data.length > this.rawMaxBytes) {
      await rename(file, `${file}.1`).catch(() => {});
      this.rawSize = 0;
    }
    const keep = data.length > this.rawMaxBytes ? data.subarray(data.length - this.rawMaxBytes) : data;
    await appendFile(file, keep);
    this.rawSize += keep.length;
  }
}

/**
 * Keep what a lost terminal (its tmux is gone) last showed as `scrollback.prev`: its
 * scrollback followed by its last screen. The live files are removed.
 */
export async function keepLostScrollback(dir: string): Promise<string> {
  const prev = path.join(dir, 'scrollback.prev');
  const read = (name: string) => readFile(path.join(dir, name), 'utf8').catch(() => '');
  const [scrollback, screen] = await Promise.all([read('scrollback'), read('screen')]);
  await writeFileAtomic(prev, scrollback && screen ? `${scrollback}\n${screen}` : scrollback || screen);
  for (const name of ['scrollback', 'screen', 'screen.ansi', 'raw', 'raw.1', 'status']) await rm(path.join(dir, name), { force: true });
  return prev;
}
