import { readdir } from 'node:fs/promises';
import { readUntrustedRange } from '../util/untrusted-fs.js';
import { formatPretty } from './pretty.js';
import { datedLogFiles } from './rotating-files.js';

/**
 * The log files of an instance (`<state>/logs/<process>.log`: the server's, the kernel's,
 * ticks' and its watch's; see rotating-files.ts) read back for a person: lines of all
 * of them in time order, as `formatPretty` writes them on a terminal, with the date and the
 * process. `kernel-runner logs` prints them and follows them.
 */

export interface LogLine {
  time: number;
  source: string;
  record: Record<string, unknown>;
}

/** `<process>.log`; not the `<process>-current.log` copies earlier versions wrote beside it. */
const LOG_FILE = /^([a-z][a-z0-9._-]{0,80})\.log$/;
/** How much of each file's end is read for the last lines. */
const TAIL_BYTES = 512 * 1024;
/** The most one poll reads of a file that grew (the rest comes at the next). */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** How many dated files of one process `last` reads back at most. */
const MAX_OLDER = 3;

/** Pure: one line of a log file, or undefined when it is not one of pino's records. */
export function parseLogLine(text: string, source: string): LogLine | undefined {
  try {
    const record = JSON.parse(text) as unknown;
    if (!record || typeof record !== 'object' || Array.isArray(record)) return undefined;
    const time = (record as { time?: unknown }).time;
    return typeof time === 'number' ? { time, source, record: record as Record<string, unknown> } : undefined;
  } catch {
    return undefined;
  }
}

/** Pure: a line for a person: `2026-12-06 04:51:02 WARN  watch-scout scout tick 3: … · key=value`. */
export function formatLogLine(line: LogLine, options: { color: boolean }): string {
  return formatPretty(line.record, { color: options.color, date: true, source: line.source.padEnd(6) });
}

/** The log files of a logs folder, by process name, each with the dated files rotated out of it (newest first). */
async function logFiles(dir: string): Promise<{ file: string; source: string; older: string[] }[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const names = entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
  return names.flatMap((name) => {
    const match = LOG_FILE.exec(name);
    if (!match || match[1]!.endsWith('-current')) return [];
    const source = match[1]!;
    const older = datedLogFiles(names, source).map((dated) => dated.name).reverse();
    return [{ file: name, source, older }];
  });
}

function complete(data: Buffer): { lines: string[]; used: number } {
  const end = data.lastIndexOf(0x0a) + 1;
  return { lines: data.subarray(0, end).toString('utf8').split('\n').filter(Boolean), used: end };
}

/** Reads the instance's logs: the last lines, then (`follow`) what each file gains. */
export class LogFollower {
  private readonly offsets = new Map<string, number>();

  constructor(private readonly dir: string) {}

  /**
   * The last `count` lines of every process together, oldest first. A file rotated a moment
   * ago holds few lines: the process's dated files before it give the rest (up to MAX_OLDER).
   */
  async last(count: number): Promise<LogLine[]> {
    const lines: LogLine[] = [];
    for (const { file, source, older } of await logFiles(this.dir)) {
      const tail = await this.tailOf(file, source);
      this.offsets.set(file, tail.end);
      let ofSource = tail.lines;
      for (const previous of older.slice(0, MAX_OLDER)) {
        if (ofSource.length >= count) break;
        ofSource = [...(await this.tailOf(previous, source)).lines, ...ofSource];
      }
      lines.push(...ofSource.slice(-count));
    }
    return lines.sort((a, b) => a.time - b.time).slice(-count);
  }

  /** The records in the last TAIL_BYTES of one file, and where its complete lines end. */
  private async tailOf(file: string, source: string): Promise<{ lines: LogLine[]; end: number }> {
    const size = (await readUntrustedRange(this.dir, file, { maxBytes: 0 }))?.size ?? 0;
    const from = Math.max(0, size - TAIL_BYTES);
    const read = await readUntrustedRange(this.dir, file, { from, maxBytes: TAIL_BYTES });
    if (!read) return { lines: [], end: 0 };
    const { lines: texts, used } = complete(read.data);
    // A read from the middle of a file starts inside a line: drop it.
    const lines = (from > 0 ? texts.slice(1) : texts).flatMap((text) => parseLogLine(text, source) ?? []);
    return { lines, end: from + used };
  }

  /** What the files gained since the last look (a file that shrank was rotated: read from its start), oldest first. */
  async next(): Promise<LogLine[]> {
    const lines: LogLine[] = [];
    for (const { file, source } of await logFiles(this.dir)) {
      let from = this.offsets.get(file) ?? 0;
      const size = (await readUntrustedRange(this.dir, file, { maxBytes: 0 }))?.size ?? 0;
      if (size < from) from = 0;
      if (size === from) continue;
      const read = await readUntrustedRange(this.dir, file, { from, maxBytes: CHUNK_BYTES });
      if (!read) continue;
      const { lines: texts, used } = complete(read.data);
      for (const text of texts) {
        const line = parseLogLine(text, source);
        if (line) lines.push(line);
      }
      this.offsets.set(file, from + used);
    }
    return lines.sort((a, b) => a.time - b.time);
  }
}
