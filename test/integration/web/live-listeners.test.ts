import { getEventListeners } from 'node:events';
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatherStatus } from '../../../src/runner/watch/service/status-view.js';
import { startWebServer } from '../../../src/web/web-server.js';
import { pollUntil } from '../../helpers/poll.js';

/** GET with the web view's session cookie; resolves with the response as it starts. */
function get(url: string, cookie = ''): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => http.get(url, { headers: { cookie } }, resolve).once('error', reject));
}

describe('the web view stream (in process)', () => {
  it('keeps the same few abort listeners however many turns its loops make, and prints no MaxListenersExceededWarning', async () => {
    // Every abort listener added to a signal while the stream is open, and on which signal.
    const added = new Map<AbortSignal, number>();
    const original = EventTarget.prototype.addEventListener;
    EventTarget.prototype.addEventListener = function (this: EventTarget, type: string, ...rest: unknown[]) {
      if (this instanceof AbortSignal && type === 'abort') added.set(this, (added.get(this) ?? 0) + 1);
      return (original as (...args: unknown[]) => void).call(this, type, ...rest);
    } as typeof original;
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const web = await startWebServer({ status: () => gatherStatus(undefined), token: 'test-token', write: false, host: '127.0.0.1', port: 0 });
    try {
      const login = await get(`${web.url}/?token=test-token`);
      login.resume();
      const cookie = (login.headers['set-cookie'] ?? [])[0]?.split(';')[0] ?? '';
      const stream = await get(`${web.url}/api/live?instances=1&events=*`, cookie);
      expect(stream.statusCode).toBe(200);
      let events = '';
      stream.on('data', (chunk: Buffer) => (events += chunk.toString()));
      let most = 0;
      // The stream's loops sleep on its signal every 40 ms: 100 turns, about 4 s.
      const busiest = await pollUntil(
        () => {
          const [signal, turns] = [...added].sort((a, b) => b[1] - a[1])[0] ?? [];
          if (signal) most = Math.max(most, getEventListeners(signal, 'abort').length);
          return signal && turns! >= 100 ? signal : undefined;
        },
        'a hundred turns of the stream loops',
        { timeoutMs: 30_000, intervalMs: 10 },
      );
      expect(events).toContain('event: instances');
      // One listener that ends the stream's heartbeat, and one for each loop's sleep in progress.
      expect(most).toBeLessThanOrEqual(4);
      stream.destroy();
      await pollUntil(() => getEventListeners(busiest, 'abort').length === 0, 'the stream to let go of its listeners', { timeoutMs: 10_000 });
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      EventTarget.prototype.addEventListener = original;
      process.off('warning', onWarning);
      await web.close();
    }
  }, 60_000);
});
