import type http from 'node:http';

/** Server-sent events: the stream's head, a heartbeat, and whether the page keeps up (`writable`). */
export function openSse(req: http.IncomingMessage, res: http.ServerResponse): { send: (event: string, data: string) => void; signal: AbortSignal; writable: () => boolean } {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
  res.write(': ok\n\n');
  const stop = new AbortController();
  let full = false;
  res.on('drain', () => {
    full = false;
  });
  req.on('close', () => stop.abort());
  const heartbeat = setInterval(() => res.write(': ping\n\n'), 15_000);
  stop.signal.addEventListener('abort', () => clearInterval(heartbeat), { once: true });
  return {
    signal: stop.signal,
    writable: () => !full,
    send(event, data) {
      if (stop.signal.aborted) return;
      if (!res.write(`event: ${event}\n${data.split('\n').map((line) => `data: ${line}`).join('\n')}\n\n`)) full = true;
    },
  };
}
