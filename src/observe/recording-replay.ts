import { createReadStream } from 'node:fs';
import readline from 'node:readline';
import type { RecordingHeader } from './recording.js';

/**
 * Reading an asciicast v2 recording back: its header, then its events in order. What the
 * events print is the agent's terminal output: a reader that shows it to a person passes it
 * through a filter first (util/terminal-filter.ts).
 */

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

/** A recording file, line by line: the header, then every event. Throws when the first line is not a header. */
export async function* readCast(file: string): AsyncGenerator<CastHeader | CastEvent> {
  const lines = readline.createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let first = true;
  for await (const line of lines) {
    if (first) {
      first = false;
      const header = parseCastHeader(line);
      if (!header) throw new Error(`${file} is not an asciicast v2 recording (its first line is not a version 2 header)`);
      yield header;
      continue;
    }
    const event = parseCastEvent(line);
    if (event) yield event;
  }
  if (first) throw new Error(`${file} is empty`);
}

/** Pure: how long to wait before an event, from the gap since the one before, the idle cap and the speed. */
export function replayDelayMs(gapSeconds: number, options: { speed: number; idleLimitSeconds?: number }): number {
  const gap = Math.max(0, options.idleLimitSeconds === undefined ? gapSeconds : Math.min(gapSeconds, options.idleLimitSeconds));
  return (gap * 1000) / options.speed;
}
