import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestSocketJson } from '../../../src/util/net/socket-json.js';

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
