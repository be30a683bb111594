import { constants } from 'node:fs';
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { BatchedWriter } from '../util/batched-writer.js';
import { type TickFileKind, parseTickFileName, tickFileName } from './tick-files.js';

/**
 * Terminal recordings, `<state>/logs/recordings/tty_N-tick-NNN.cast` (`tty_N-between-NNN.cast`
 * for work while no tick runs, after tick NNN; `instancePaths().recordings`):
 * their names, their writer and their parser. Every reader (the web view, `agent-kernel play`)
 * and the writer go through this module.
 *
 * One terminal's output as an asciicast v2 file (what `asciinema play` and
 * asciinema-player read): a header line, then `[seconds, "o", text]` for output,
 * `[seconds, "m", label]` markers at command boundaries and `[seconds, "r", "COLSxROWS"]`
 * on resize. Cheap on the hot path: output is decoded and queued, and written in one
 * append every FLUSH_MS. Stops (with a last marker saying so) at `maxBytes`.
 */

const FLUSH_MS = 40;

/** Recordings are tick files (tick-files.ts) named `.cast`. */
export const RECORDING: TickFileKind = { extension: '.cast' };

export interface RecordingHeader {
  cols: number;
  rows: number;
  title: string;
  /** Unix time of time 0, in seconds. */
  startedAt?: number;
}

export class Recording {
  private readonly decoder = new StringDecoder('utf8');
  private readonly started: number;
  private readonly lines: BatchedWriter<string>;
  private gathering: { at: number; parts: string[] } | undefined;
  /** Bytes of every line queued so far, written or not. */
  private bytes = 0;
  private full = false;
  private handle: FileHandle | undefined;

  constructor(
    readonly file: string,
    header: RecordingHeader,
    private readonly maxBytes: number,
  ) {
    this.started = header.startedAt === undefined ? Date.now() : header.startedAt * 1000;
    this.lines = new BatchedWriter({
      delayMs: FLUSH_MS,
      // Output gathered so far goes in this batch as one event.
      beforeFlush: () => {
        if (!this.full) this.endOutput();
      },
      write: async (lines) => {
        this.handle ??= await openAppend(this.file);
        await this.handle.write(lines.join(''));
      },
    });
    this.push(
      JSON.stringify({
        version: 2,
        width: header.cols,
        height: header.rows,
        timestamp: Math.floor(this.started / 1000),
        title: header.title,
        env: { TERM: 'xterm-256color' },
      }),
    );
  }

  /** Output is gathered into one event per flush (one JSON string per FLUSH_MS, not per read). */
  output(data: Buffer | string): void {
    if (this.full) return;
    const text = typeof data === 'string' ? data : this.decoder.write(data);
    if (!text) return;
    if (this.gathering === undefined) {
      this.gathering = { at: this.now(), parts: [] };
      this.lines.schedule();
    }
    this.gathering.parts.push(text);
  }

  marker(label: string): void {
    if (!this.full) this.event('m', label);
  }

  resize(cols: number, rows: number): void {
    if (!this.full) this.event('r', `${cols}x${rows}`);
  }

  private endOutput(): void {
    const output = this.gathering;
    if (!output) return;
    this.gathering = undefined;
    this.event('o', output.parts.join(''), output.at);
  }

  /** Seconds since time 0, as asciicast writes them. */
  private now(): number {
    return Math.round(Date.now() - this.started) / 1000;
  }

  private event(code: 'o' | 'm' | 'r', text: string, at?: number): void {
    if (code !== 'o') this.endOutput();
    this.push(JSON.stringify([at ?? this.now(), code, text]));
    if (this.bytes > this.maxBytes) {
      this.full = true;
      this.push(JSON.stringify([this.now(), 'm', `recording stopped: it reached ${this.maxBytes} bytes`]));
    }
  }

  private push(line: string): void {
    this.lines.add(line + '\n');
    this.bytes += Buffer.byteLength(line) + 1;
  }

  /** Write what is queued now. Never throws (a full disk must not stop the terminal). */
  flush(): Promise<void> {
    return this.lines.flush();
  }

  /** Write what is queued and let go of the file (the recording ends: a new tick, the terminal closed). */
  async close(): Promise<void> {
    await this.flush();
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => {});
  }
}

/** One append handle per recording, opened once (a folder is made once, never through a link at the file). */
async function openAppend(file: string): Promise<FileHandle> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o755 });
  return open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
}

/** `tty_N-tick-NNN.cast`: one recording per terminal per tick (`-2`, `-3`... when the number is reused in the tick); `tty_N-between-NNN.cast` between ticks. */
export function recordingName(tty: number, tick: number, part = 1, between = false): string {
  return tickFileName(RECORDING, tty, tick, part, between);
}

/** Pure: the terminal, tick (`between`: after that tick, while none ran) and part of a recording's file name, or undefined for another name. */
export function parseRecordingName(name: string): { tty: number; tick: number; between: boolean; part: number } | undefined {
  return parseTickFileName(RECORDING, name);
}

export interface CastHeader extends RecordingHeader {
  /** Unix seconds of time 0 (the header's `timestamp`). */
  timestamp?: number;
}

export type CastEvent = { time: number; code: 'o' | 'm' | 'r' | 'i'; data: string };

/** Pure: the header line of a recording, or undefined when it is not one. */
export function parseCastHeader(line: string): CastHeader | undefined {
  try {
    const value = JSON.parse(line) as Record<string, unknown>;
    if (typeof value !== 'object' || value === null || value.version !== 2) return undefined;
    const cols = Number(value.width);
    const rows = Number(value.height);
    if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols <= 0 || rows <= 0) return undefined;
    return {
      cols,
      rows,
      title: typeof value.title === 'string' ? value.title : '',
      ...(typeof value.timestamp === 'number' ? { timestamp: value.timestamp, startedAt: value.timestamp } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Pure: one event line, or undefined (a torn last line, something else). */
export function parseCastEvent(line: string): CastEvent | undefined {
  if (!line.startsWith('[')) return undefined;
  try {
    const value = JSON.parse(line) as unknown;
    if (!Array.isArray(value) || typeof value[0] !== 'number' || typeof value[2] !== 'string') return undefined;
    const code = value[1];
    if (code !== 'o' && code !== 'm' && code !== 'r' && code !== 'i') return undefined;
    return { time: value[0], code, data: value[2] };
  } catch {
    return undefined;
  }
}
