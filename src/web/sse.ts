import type http from 'node:http';
import path from 'node:path';
import type { Instance } from '../config/instance.js';
import { followEvents, pause, readEvents } from '../observe/events/event-log.js';
import { readUntrustedRange, relativeInside } from '../util/untrusted-fs.js';
import { currentRecording } from './web-data.js';

/** Server-sent events: the stream's head, and a send that respects a slow reader. */
export function openSse(req: http.IncomingMessage, res: http.ServerResponse): { send: (event: string, data: string) => void; signal: AbortSignal } {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
  res.write(': ok\n\n');
  const stop = new AbortController();
  req.on('close', () => stop.abort());
  const heartbeat = setInterval(() => res.write(': ping\n\n'), 15_000);
  stop.signal.addEventListener('abort', () => clearInterval(heartbeat), { once: true });
  return {
    signal: stop.signal,
    send(event, data) {
      if (stop.signal.aborted) return;
      res.write(`event: ${event}\n${data.split('\n').map((line) => `data: ${line}`).join('\n')}\n\n`);
    },
  };
}

/** How much of a long recording a live view starts from (its end: what the screen shows now). */
const LIVE_START_MAX_BYTES = 2 * 1024 * 1024;
const POLL_MS = 100;

/**
 * A terminal, live: its newest recording's header (`header`), then every asciicast event
 * (`cast`) as it is appended; when a newer recording starts (a new tick), a new header.
 */
export async function streamTerminal(instance: Instance, tty: number, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const { send, signal } = openSse(req, res);
  let file: string | undefined;
  let position = 0;
  let lastCheck = 0;
  while (!signal.aborted) {
    if (Date.now() - lastCheck > 1000 || !file) {
      lastCheck = Date.now();
      const newest = await currentRecording(instance, tty);
      if (newest && newest !== file) {
        file = newest;
        const head = await readUntrustedRange(instance.paths.stateRoot, relativeInside(instance.paths.stateRoot, file), { maxBytes: 64 * 1024 });
        const text = head?.data.toString('utf8') ?? '';
        const headerEnd = text.indexOf('\n');
        if (headerEnd < 0) {
          file = undefined;
          await pause(POLL_MS, signal);
          continue;
        }
        send('header', JSON.stringify({ ...(JSON.parse(text.slice(0, headerEnd)) as object), file: path.basename(file) }));
        position = Math.max(headerEnd + 1, (head?.size ?? 0) - LIVE_START_MAX_BYTES);
        if (position > headerEnd + 1) {
          // Start at a whole line.
          const probe = await readUntrustedRange(instance.paths.stateRoot, relativeInside(instance.paths.stateRoot, file), { from: position, maxBytes: 64 * 1024 });
          position += (probe?.data.indexOf(0x0a) ?? -1) + 1;
        }
      }
    }
    if (!file) {
      await pause(POLL_MS * 5, signal);
      continue;
    }
    const chunk = await readUntrustedRange(instance.paths.stateRoot, relativeInside(instance.paths.stateRoot, file), { from: position, maxBytes: 1024 * 1024 });
    const end = chunk ? chunk.data.lastIndexOf(0x0a) + 1 : 0;
    if (chunk && end > 0) {
      for (const line of chunk.data.subarray(0, end).toString('utf8').split('\n')) if (line) send('cast', line);
      position += end;
      continue;
    }
    await pause(POLL_MS, signal);
  }
}

/** An instance's events: the last `tail` of them, then each new one. */
export async function streamEvents(instance: Instance, req: http.IncomingMessage, res: http.ServerResponse, tail = 200): Promise<void> {
  const { send, signal } = openSse(req, res);
  const { events, offset } = await readEvents(instance.paths.events);
  for (const event of events.slice(-tail)) send('event', JSON.stringify(event));
  await followEvents(instance.paths.events, offset, (event) => send('event', JSON.stringify(event)), signal);
}
