import { constants } from 'node:fs';
import { type FileHandle, mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { TTY_STATUS_FILE, type TtyStatusFile, writeTtyStatusFile } from '../state/tty-status-file.js';
import { concatFilesAtomic, writeFileAtomic } from '../util/atomic-write.js';
import { BatchedWriter } from '../util/batched-writer.js';
import type { Row } from './screen-source.js';
import { type LinePosition, type LineRange, ScrollbackFile } from './scrollback-file.js';

export type { TtyStatusFile } from '../state/tty-status-file.js';
export type { LineRange } from './scrollback-file.js';

export interface TtySnapshot {
  screen: string;
  screenAnsi: string;
  status: TtyStatusFile;
}

/** How often the screen and status files are rewritten while output flows. */
export const SNAPSHOT_INTERVAL_MS = 250;

const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The files of one terminal in `<state>/sessions/tty_N/` (shown read-only at `<data>/tmp/sessions`): `screen`, `screen.ansi` and
 * `status` rewritten atomically at most every SNAPSHOT_INTERVAL_MS; `raw` (every byte,
 * rotated to `raw.1` past its cap) and `scrollback` (rows that left the screen, rotated to
 * `scrollback.<n>` past its cap, see scrollback-file.ts) appended through open handles.
 */
export class TtyFiles {
  readonly dir: string;
  readonly scrollback: string;
  readonly screen: string;
  private readonly lines: ScrollbackFile;
  /** Raw output, and at each flush what the screen shows then. */
  private readonly writer: BatchedWriter<Buffer | TtySnapshot>;
  private rawSize = -1;
  private raw: FileHandle | undefined;
  /** Rows below this are in the scrollback file. */
  scrollbackRows: number;
  /** The first row the agent has not been shown, and (once written) where its line is. */
  private anchor: { abs: number; at?: LinePosition; unknown?: boolean } | undefined;
  /** Where the previous report's new output began: its pointer may still be read. */
  private previousAnchor: LinePosition | undefined;
  private closed = false;

  private constructor(
    dir: string,
    private readonly rawMaxBytes: number,
    snapshot: () => TtySnapshot,
    lines: ScrollbackFile,
    scrollbackRows: number,
  ) {
    this.dir = dir;
    this.scrollback = lines.live;
    this.screen = path.join(dir, 'screen');
    this.lines = lines;
    this.scrollbackRows = scrollbackRows;
    this.writer = new BatchedWriter({
      delayMs: SNAPSHOT_INTERVAL_MS,
      beforeFlush: () => {
        if (!this.closed) this.writer.add(snapshot());
      },
      write: (items) => this.write(items),
    });
  }

  /**
   * The files in `dir`, continuing what a previous server wrote there. `scrollbackRows`: rows
   * below this are already in the scrollback file (when it has any text).
   */
  static async open(
    dir: string,
    options: { rawMaxBytes: number; scrollbackMaxBytes: number; scrollbackRows: number; snapshot: () => TtySnapshot },
  ): Promise<TtyFiles> {
    await mkdir(dir, { recursive: true });
    const lines = await ScrollbackFile.open(dir, options.scrollbackMaxBytes);
    return new TtyFiles(dir, options.rawMaxBytes, options.snapshot, lines, lines.hasContent ? options.scrollbackRows : 0);
  }

  appendRaw(data: Buffer): void {
    this.writer.add(data);
  }

  /** Rows that left the screen, oldest first; rows already in the file are skipped. */
  appendRows(rows: readonly Row[]): void {
    const parts: string[] = [];
    let continues = false;
    let anchorPart = -1;
    const anchor = this.anchor && !this.anchor.at && !this.anchor.unknown ? this.anchor : undefined;
    for (const row of rows) {
      if (row.abs < this.scrollbackRows) continue;
      if (row.wrapped && parts.length > 0) parts[parts.length - 1] += row.text;
      else {
        if (row.wrapped && parts.length === 0 && this.lines.hasContent) continues = true;
        parts.push(row.text);
      }
      if (anchor && anchorPart < 0 && row.abs >= anchor.abs) anchorPart = parts.length - 1;
      this.scrollbackRows = row.abs + 1;
    }
    if (parts.length === 0) return;
    const first = continues ? this.lines.lastLine() : undefined;
    const start = this.lines.append(parts.join('\n'), parts.length - (continues ? 1 : 0), continues, this.previousAnchor ?? this.anchor?.at);
    const base = first ?? start;
    if (anchor && anchorPart >= 0) anchor.at = { segment: base.segment, line: base.line + anchorPart };
    this.schedule();
  }

  /**
   * The agent has been shown everything before row `abs`: the next report's lines count from
   * there. Unknown when that row is in the file already (written by a server before).
   */
  anchorAt(abs: number): void {
    if (this.anchor?.at) this.previousAnchor = this.anchor.at;
    this.anchor = abs < this.scrollbackRows ? { abs, unknown: true } : { abs };
  }

  /**
   * Where lines `from`..`to` (0-based, counted from the row given to anchorAt) are in the
   * scrollback files, and how many of them are not in a file (still on the screen).
   * undefined: not known (the lines were written by a server before this one).
   */
  locate(from: number, to: number): { ranges: LineRange[]; onScreen: number } | undefined {
    const at = this.anchor?.at;
    if (this.anchor?.unknown) return undefined;
    const inFiles = at ? this.lines.linesFrom(at) : 0;
    const ranges = at && from < inFiles ? this.lines.ranges(at, from, Math.min(to, inFiles - 1)) : [];
    return ranges && { ranges, onScreen: Math.max(0, to - Math.max(from, inFiles) + 1) };
  }

  /** How many of the lines counted from the anchor row are in the scrollback files. */
  linesInFiles(): number | undefined {
    if (this.anchor?.unknown) return undefined;
    return this.anchor?.at ? this.lines.linesFrom(this.anchor.at) : 0;
  }

  /** Something changed: rewrite the snapshot soon (not on every byte). */
  schedule(): void {
    if (!this.closed) this.writer.schedule();
  }

  /** Write everything pending now. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  private async write(items: ReadonlyArray<Buffer | TtySnapshot>): Promise<void> {
    const raw = items.filter((item): item is Buffer => Buffer.isBuffer(item));
    const snapshot = items.findLast((item): item is TtySnapshot => !Buffer.isBuffer(item));
    // Five files, each written by one writer: side by side (a wait's reply waits for them).
    // The snapshots are rewritten every SNAPSHOT_INTERVAL_MS while output flows: atomic, not synced to disk.
    const fleeting = { durable: false };
    await Promise.all([
      raw.length > 0 ? this.writeRaw(raw.length === 1 ? raw[0]! : Buffer.concat(raw)) : undefined,
      this.lines.write(),
      snapshot && writeFileAtomic(this.screen, `${snapshot.screen}\n`, undefined, fleeting),
      snapshot && writeFileAtomic(path.join(this.dir, 'screen.ansi'), snapshot.screenAnsi, undefined, fleeting),
      snapshot && writeTtyStatusFile(this.dir, snapshot.status, fleeting),
    ]);
  }

  /** Copy the kept scrollback plus the final screen to `archivePath`, then remove the live files. */
  async archive(archivePath: string, finalRows: readonly Row[]): Promise<void> {
    this.appendRows(finalRows);
    await this.close();
    await concatFilesAtomic(archivePath, this.lines.files());
    await rm(this.dir, { recursive: true, force: true });
  }

  /** Stop writing (the server is detaching); pending data is written first. */
  async close(): Promise<void> {
    const flushed = this.flush();
    this.closed = true;
    await flushed;
    await this.lines.close();
    const raw = this.raw;
    this.raw = undefined;
    await raw?.close().catch(() => {});
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
      const handle = this.raw;
      this.raw = undefined;
      await handle?.close().catch(() => {});
      await rename(file, `${file}.1`).catch(() => {});
      this.rawSize = 0;
    }
    const keep = data.length > this.rawMaxBytes ? data.subarray(data.length - this.rawMaxBytes) : data;
    this.raw ??= await open(file, APPEND_FLAGS, 0o644);
    await this.raw.write(keep);
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
  const rotated = (await readdir(dir).catch(() => [] as string[])).filter((name) => /^scrollback\.\d+$/.test(name));
  for (const name of ['scrollback', 'screen', 'screen.ansi', 'raw', 'raw.1', TTY_STATUS_FILE, ...rotated]) await rm(path.join(dir, name), { force: true });
  return prev;
}
