import type http from 'node:http';

/** A request body over the caller's limit (by its Content-Length, or as it arrives). */
export class BodyTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`request body too large (at most ${maxBytes} bytes)`);
  }
}

/**
 * Answer with JSON (one line, newline-terminated, with its length); `headers` add to or
 * replace the defaults. Nothing happens once an answer has begun.
 */
export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  if (res.headersSent) return;
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A request's body as text, refused with BodyTooLarge past `maxBytes` (before reading it when its Content-Length says so). */
export function readBody(req: http.IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length'] ?? 0) > maxBytes) {
      reject(new BodyTooLarge(maxBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new BodyTooLarge(maxBytes));
        req.pause();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
