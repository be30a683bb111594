import { constants } from 'node:fs';
import { type FileHandle, open, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** A run of lines in one file, numbered from 1 as `sed -n` counts them. */
export interface LineRange {
  file: string;
  from: number;
  to: number;
}

/** Where a line is: which segment (the live file or a rotated one) and its line number there. */
export interface LinePosition {
  segment: number;
  line: number;
}

const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const ROTATED = /^scrollback\.(\d{1,9})$/;
/** Rotated files kept at most, even when they hold lines the agent has not been shown (8 x the cap). */
export const MAX_KEPT = 8;

interface Segment {
  n: number;
  /** Lines in it (the last one may continue in the next segment). */
  lines: number;
}

/**
 * The rows that left a terminal's screen, one logical line per file line: `scrollback`,
 * rotated to `scrollback.<n>` (n counts up, never reused, so a name given to the agent
 * stays right) once it passes `maxBytes`. Rotated files that hold lines the agent has not
 * been shown are kept; older ones go. Knows the file and line number of every line it
 * wrote, so that the agent can be pointed at exact lines. Writes go through one append
 * handle, opened without following a link.
 */
export class ScrollbackFile {
  readonly live: string;
  private readonly segments: Segment[];
  private bytes: number;
  private hasText: boolean;
  private queue: Array<{ text: string } | { rotate: number; remove: number[] }> = [];
  private handle: FileHandle | undefined;

  private constructor(
    readonly dir: string,
    private readonly maxBytes: number,
    state: { segments: Segment[]; bytes: number },
  ) {
    this.live = path.join(dir, 'scrollback');
    this.segments = state.segments;
    this.bytes = state.bytes;
    this.hasText = state.bytes > 0;
  }

  /** The files in `dir` as a previous server left them (the live file's lines are counted). */
  static async open(dir: string, maxBytes: number): Promise<ScrollbackFile> {
    const names = await readdir(dir).catch(() => [] as string[]);
    const rotated = names.flatMap((name) => ROTATED.exec(name)?.[1] ?? []).map(Number).sort((a, b) => a - b);
    const { bytes, lines } = await countLines(path.join(dir, 'scrollback'));
    // Rotated files from before: their line counts are not needed (positions start at this server's lines).
    const segments = rotated.map((n) => ({ n, lines: 0 }));
    segments.push({ n: (rotated.at(-1) ?? 0) + 1, lines });
    return new ScrollbackFile(dir, maxBytes, { segments, bytes });
  }

  get hasContent(): boolean {
    return this.hasText;
  }

  /** The path of a segment's file. */
  fileOf(segment: number): string {
    return segment === this.liveSegment.n ? this.live : path.join(this.dir, `scrollback.${segment}`);
  }

  private get liveSegment(): Segment {
    return this.segments[this.segments.length - 1]!;
  }

  /** Where the line being written (the last one) is. */
  lastLine(): LinePosition {
    return { segment: this.liveSegment.n, line: Math.max(1, this.liveSegment.lines) };
  }

  /**
   * Queue `text`: `lines` logical lines, the first of which continues the last line written
   * when `continues`. A segment past its cap is rotated first, at a line boundary only.
   * `keepFrom`: the oldest line the agent may still need (rotated files before it may go).
   */
  append(text: string, lines: number, continues: boolean, keepFrom: LinePosition | undefined): LinePosition {
    let split = false;
    // One endless line (no newline for twice the cap) is split across files rather than let grow without bound.
    if (this.bytes >= this.maxBytes && (!continues || this.bytes >= 2 * this.maxBytes)) {
      this.rotate(keepFrom);
      split = continues;
    }
    const segment = this.liveSegment;
    const start = { segment: segment.n, line: segment.lines + 1 };
    const out = this.hasText && !continues ? `\n${text}` : text;
    segment.lines += lines + (split ? 1 : 0);
    this.bytes += out.length;
    this.hasText = true;
    const last = this.queue.at(-1);
    if (last && 'text' in last) last.text += out;
    else this.queue.push({ text: out });
    return start;
  }

  /** Lines `from`..`to` counted from `start`, as ranges per file; undefined when the file of `start` is no longer kept. */
  ranges(start: LinePosition, from: number, to: number): LineRange[] | undefined {
    if (!this.segments.some((s) => s.n === start.segment)) return undefined;
    const out: LineRange[] = [];
    let skip = from;
    let left = to - from + 1;
    let line = start.line;
    for (const segment of this.segments) {
      if (segment.n < start.segment || left <= 0) continue;
      const first = segment.n === start.segment ? line : 1;
      const available = segment.lines - first + 1;
      if (skip >= available) {
        skip -= available;
        continue;
      }
      const take = Math.min(left, available - skip);
      out.push({ file: this.fileOf(segment.n), from: first + skip, to: first + skip + take - 1 });
      left -= take;
      skip = 0;
      line = 1;
    }
    return out;
  }

  /** Lines written after `start` (itself included), in all segments. */
  linesFrom(start: LinePosition): number {
    let count = 0;
    for (const segment of this.segments) {
      if (segment.n === start.segment) count += segment.lines - start.line + 1;
      else if (segment.n > start.segment) count += segment.lines;
    }
    return Math.max(0, count);
  }

  /** Write what is queued (call from one chain: writes must not interleave). */
  async write(): Promise<void> {
    const queue = this.queue;
    this.queue = [];
    for (const item of queue) {
      if ('text' in item) {
        this.handle ??= await open(this.live, APPEND_FLAGS, 0o644);
        await this.handle.write(item.text);
        continue;
      }
      await this.close();
      // Renamed within the server-private folder; the name is new (numbers are never reused).
      await rename(this.live, path.join(this.dir, `scrollback.${item.rotate}`)).catch(() => {});
      for (const n of item.remove) await rm(path.join(this.dir, `scrollback.${n}`), { force: true });
    }
  }

  /** Every kept segment's file, oldest first (for the archive). */
  files(): string[] {
    return this.segments.map((s) => this.fileOf(s.n));
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => {});
  }

  private rotate(keepFrom: LinePosition | undefined): void {
    const rotated = this.liveSegment.n;
    this.segments.push({ n: rotated + 1, lines: 0 });
    this.bytes = 0;
    this.hasText = false;
    // Keep the newest rotated file, and every one holding a line from keepFrom on, up to MAX_KEPT (a disk is not endless).
    const keep = (s: Segment) => s.n >= rotated || (keepFrom !== undefined && s.n >= keepFrom.segment && s.n > rotated - MAX_KEPT);
    const remove = this.segments.filter((s) => !keep(s)).map((s) => s.n);
    if (remove.length > 0) this.segments.splice(0, this.segments.length, ...this.segments.filter(keep));
    this.queue.push({ rotate: rotated, remove });
  }
}

/** Bytes and lines of a file written as ScrollbackFile writes (no newline after the last line). */
async function countLines(file: string): Promise<{ bytes: number; lines: number }> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
  if (!handle) return { bytes: 0, lines: 0 };
  try {
    const buffer = Buffer.allocUnsafe(1 << 16); // up to 20 terminals count at once at start-up: a small buffer each
    let bytes = 0;
    let newlines = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, bytes);
      if (bytesRead === 0) break;
      for (let i = buffer.indexOf(10, 0); i >= 0 && i < bytesRead; i = buffer.indexOf(10, i + 1)) newlines += 1;
      bytes += bytesRead;
    }
    return { bytes, lines: bytes > 0 ? newlines + 1 : 0 };
  } finally {
    await handle.close();
  }
}
