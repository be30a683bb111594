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
 * Longest progress line kept: a build's RUN output is the agent's, and an engine may pass a
 * line without end; past this the rest of the line is dropped.
 */
const MAX_LINE_CHARS = 1024 * 1024;

/**
 * Read a JSON-lines progress stream to its end, calling `onEvent` for each event.
 * Resolves with the error events only (a build prints what its Containerfile says, endlessly
 * if the agent wants: nothing else is kept); rejects only when the connection fails (an
 * `error` event is data, for the caller to judge).
 */
export function readEngineEvents(stream: NodeJS.ReadableStream, onEvent: (event: EngineEvent) => void): Promise<EngineEvent[]> {
  return new Promise((resolve, reject) => {
    const errors: EngineEvent[] = [];
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
      if (event.error) errors.push(event);
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
      if (buffer.length > MAX_LINE_CHARS) buffer = buffer.slice(0, MAX_LINE_CHARS);
    });
    stream.once('error', reject);
    stream.once('end', () => {
      handle(buffer);
      resolve(errors);
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
