import { stat } from 'node:fs/promises';
import path from 'node:path';
import { readUntrustedRange } from '../util/untrusted-fs.js';
import { parseEventLine } from './events/event-schema.js';

/** Where each event log was read up to, per process (the server has one instance). */
const offsets = new Map<string, number>();

/**
 * What people typed into the terminals (through `agent-kernel web --write`) since the
 * last call, as one sentence for the agent, or undefined. The first call only notes where
 * the log ends: typing from before this server started is not news.
 */
export async function personInputSince(eventsFile: string): Promise<string | undefined> {
  const known = offsets.get(eventsFile);
  if (known === undefined) {
    offsets.set(eventsFile, await stat(eventsFile).then((s) => s.size, () => 0));
    return undefined;
  }
  const chunk = await readUntrustedRange(path.dirname(eventsFile), path.basename(eventsFile), { from: known, maxBytes: 4 * 1024 * 1024 });
  if (!chunk) return undefined;
  if (chunk.size < known) {
    offsets.set(eventsFile, 0);
    return undefined;
  }
  const end = chunk.data.lastIndexOf(0x0a) + 1;
  offsets.set(eventsFile, known + end);
  const keys = new Map<number, number>();
  for (const line of chunk.data.subarray(0, end).toString('utf8').split('\n')) {
    const event = parseEventLine(line);
    if (event?.type === 'person.typed') keys.set(event.tty, (keys.get(event.tty) ?? 0) + event.bytes);
  }
  if (keys.size === 0) return undefined;
  const parts = [...keys.entries()].sort(([a], [b]) => a - b).map(([tty, bytes]) => `TTY ${tty} (${bytes} byte${bytes === 1 ? '' : 's'})`);
  return `A person typed into ${parts.join(', ')} since your last wait (agent-kernel web). What they typed is in the output below.`;
}
