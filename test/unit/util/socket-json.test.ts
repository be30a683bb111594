import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestSocketJson, requestSocketJsonLines } from '../../../src/util/net/socket-json.js';

let dir: string;
let server: http.Server;
let socket: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ak-socket-json-'));
  socket = path.join(dir, 's.sock');
  server = http.createServer((req, res) => {
    if (req.url === '/json') res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, ok: true }));
    else if (req.url === '/text') res.end('<html>not json</html>');
    else if (req.url === '/huge') {
      res.write('[');
      const chunk = '"' + 'x'.repeat(64 * 1024) + '",';
      for (let i = 0; i < 100; i++) res.write(chunk);
      res.end('0]');
    }
    else if (req.url === '/slow') setTimeout(() => res.end('{"late":true}'), 6500);
    else if (req.url === '/lines') {
      // A long operation: a line now and then (as a heartbeat), for longer than any default socket timeout.
      let n = 0;
      const beat = setInterval(() => {
        n += 1;
        if (n < 4) res.write(`${JSON.stringify({ progress: `step ${n}` })}\n`);
        else {
          clearInterval(beat);
          res.end(`${JSON.stringify({ done: true })}\n`);
        }
      }, 2000);
    }
    // '/silent': never answers.
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('requestSocketJson', () => {
  it('returns the status and the parsed body', async () => {
    expect(await requestSocketJson(socket, '/json', { timeoutMs: 2000, who: 'the test server' })).toEqual({ status: 201, body: { method: 'GET', ok: true } });
    expect((await requestSocketJson(socket, '/json', { method: 'POST', timeoutMs: 0, who: 'the test server' })).body).toEqual({ method: 'POST', ok: true });
  });

  it('refuses an answer that is not JSON, or too big to be one of ours, naming who answered', async () => {
    await expect(requestSocketJson(socket, '/text', { timeoutMs: 2000, who: 'the test server' })).rejects.toMatchObject({
      code: 'EBADANSWER',
      message: expect.stringMatching(/^the test server answered \/text with something that is not JSON/),
    });
    await expect(requestSocketJson(socket, '/huge', { timeoutMs: 5000, who: 'the test server' })).rejects.toMatchObject({ code: 'EBADANSWER', message: expect.stringMatching(/more than \d+ bytes/) });
  });

  it('gives up on a socket that does not answer, after timeoutMs', async () => {
    const began = Date.now();
    await expect(requestSocketJson(socket, '/silent', { timeoutMs: 300, who: 'the test server' })).rejects.toMatchObject({
      code: 'ETIMEDOUT',
      message: 'the test server did not answer /silent within 300 ms',
    });
    expect(Date.now() - began).toBeLessThan(5000);
  });
});

describe('a request allowed longer than 5 s', () => {
  it('is not cut short by Node\'s default agent (its 5 s socket timeout)', { timeout: 20_000 }, async () => {
    expect((await requestSocketJson(socket, '/slow', { timeoutMs: 0, who: 'the test server' })).body).toEqual({ late: true });
  });

  it('reads JSON lines as they come, through 8 s of progress, to the last', { timeout: 20_000 }, async () => {
    const seen: unknown[] = [];
    const answer = await requestSocketJsonLines(socket, '/lines', { method: 'POST', idleMs: 3000, deadlineMs: 0, who: 'the test server' }, (value) => seen.push(value));
    expect(answer).toEqual({ status: 200, last: { done: true } });
    expect(seen).toEqual([{ progress: 'step 1' }, { progress: 'step 2' }, { progress: 'step 3' }, { done: true }]);
  });

  it('fails a silent answer after idleMs, and a long one at its deadline, saying which', async () => {
    await expect(requestSocketJsonLines(socket, '/silent', { idleMs: 300, deadlineMs: 0, who: 'the test server' }, () => {})).rejects.toMatchObject({
      code: 'ETIMEDOUT',
      message: 'the test server did not answer /silent within 300 ms',
    });
    await expect(requestSocketJsonLines(socket, '/lines', { idleMs: 3000, deadlineMs: 1000, who: 'the test server' }, () => {})).rejects.toMatchObject({
      code: 'ETIMEDOUT',
      message: 'the test server did not finish /lines within 1 s',
    });
  });
});
