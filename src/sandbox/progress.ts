/** One event of an engine's JSON-lines progress stream (build, pull, import). */
export interface EngineEvent {
  stream?: string;
  status?: string;
  progress?: string;
  id?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: { ID?: string };
}

/**
 * Read a JSON-lines progress stream to its end, calling `onEvent` for each event.
 * Resolves with every event; rejects only when the connection fails (an `error` event is
 * data, for the caller to judge).
 */
export function readEngineEvents(stream: NodeJS.ReadableStream, onEvent: (event: EngineEvent) => void): Promise<EngineEvent[]> {
  return new Promise((resolve, reject) => {
    const events: EngineEvent[] = [];
    let buffer = '';
    const handle = (line: string): void => {
      const text = line.trim();
      if (!text) return;
      let event: EngineEvent;
      try {
        event = JSON.parse(text) as EngineEvent;
      } catch {
        event = { stream: text };
      }
      events.push(event);
      onEvent(event);
    };
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffer += chunk;
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        handle(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
      }
    });
    stream.once('error', reject);
    stream.once('end', () => {
      handle(buffer);
      resolve(events);
    });
  });
}

/** An engine event as one line for a person, or undefined when it says nothing new. */
export function eventLine(event: EngineEvent): string | undefined {
  if (event.error) return event.error.trim();
  if (event.stream !== undefined) return event.stream.replace(/\s+$/, '') || undefined;
  if (event.status) return [event.id, event.status].filter(Boolean).join(': ');
  return undefined;
}
