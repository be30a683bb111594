import { createReadStream } from 'node:fs';
import readline from 'node:readline';
import { type CastEvent, type CastHeader, parseCastEvent, parseCastHeader } from './recording.js';

/**
 * Playing an asciicast v2 recording back (`agent-kernel play`): its header, then its events in
 * order, parsed by recording.ts. What the events print is the agent's terminal output: a reader
 * that shows it to a person passes it through a filter first (util/terminal-filter.ts).
 */

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
