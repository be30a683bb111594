import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Instance } from '../config/instance.js';
import { describeError, isCodedError } from '../errors.js';
import { sendJson as answerJson, readBody } from '../util/net/http-json.js';
import { readUntrustedRange, readUntrustedTail, relativeInside } from '../util/untrusted-fs.js';
import { MAX_PERSON_INPUT_BYTES, typeForPerson } from './person-keys.js';
import { LiveHub } from './live-hub.js';
import { liveStream, parseTopics } from './live-stream.js';
import { parseTranscript } from './transcript.js';
import { WebAuth, requestUrl } from './web-auth.js';
import { type StatusSource, instanceByName, registeredNames, listInstances, listRecordings, listTicks, recordingCommands } from './web-data.js';
import { parseRecordingName } from '../observe/recording.js';
import { conversations } from '../mail/conversations.js';
import { withdrawMessage } from '../mail/withdraw.js';

/**
 * `agent-kernel web`: one page for every instance on this host. Static files from the
 * package (the page) and from node_modules (xterm.js, asciinema-player); JSON and
 * server-sent events under /api/. Loopback only, token then session cookie, strict CSP.
 */

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  // xterm.js and asciinema-player size their cells with inline styles.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

const TRANSCRIPT_MAX_BYTES = 8 * 1024 * 1024;
const RECORDING_MAX_BYTES = 64 * 1024 * 1024;
/** What a recording is served as (asciinema-player reads it). */
const RECORDING_TYPE = 'application/x-asciicast';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const require = createRequire(import.meta.url);
const ASSETS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'assets', 'web');

/** The files the page may load: a fixed table, nothing resolved from the request path. */
function staticFiles(): Map<string, string> {
  const xterm = path.dirname(require.resolve('@xterm/xterm/package.json'));
  // Its package.json is not exported; its style sheet is, three levels down.
  const player = path.resolve(path.dirname(require.resolve('asciinema-player/dist/bundle/asciinema-player.css')), '..', '..');
  const files = new Map<string, string>([
    ['/', path.join(ASSETS, 'index.html')],
    ...readdirSync(ASSETS)
      .filter((n) => /^[a-z-]+\.(js|css|svg)$/.test(n))
      .map((n): [string, string] => [`/${n}`, path.join(ASSETS, n)]),
    ['/vendor/xterm.mjs', path.join(xterm, 'lib', 'xterm.mjs')],
    ['/vendor/xterm.css', path.join(xterm, 'css', 'xterm.css')],
    ['/vendor/asciinema-player.css', path.join(player, 'dist', 'bundle', 'asciinema-player.css')],
  ]);
  // Its ES modules import each other by hashed names: serve every one of them.
  for (const name of readdirSync(path.join(player, 'dist')).filter((n) => n.endsWith('.js'))) {
    files.set(`/vendor/asciinema-player/${name}`, path.join(player, 'dist', name));
  }
  return files;
}

export interface WebServerOptions {
  /** Every instance's status (the runner's `kernel-runner status` rows). */
  status: StatusSource;
  token: string;
  write: boolean;
  host: string;
  port: number;
}

export interface WebServer {
  url: string;
  hub: LiveHub;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: string | Buffer, type = 'application/json; charset=utf-8'): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  answerJson(res, status, body, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
}

function refusalPage(message: string): string {
  const escaped = message.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><meta charset="utf-8"><title>agent-kernel</title><link rel="stylesheet" href="/style.css"><main><h1>agent-kernel</h1><p>${escaped}</p></main>`;
}

export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const auth = new WebAuth(options.token);
  const files = staticFiles();
  const hub = new LiveHub();

  async function api(req: http.IncomingMessage, res: http.ServerResponse, parts: string[], query: URLSearchParams): Promise<void> {
    if (parts[0] === 'config') return sendJson(res, 200, { write: options.write });
    if (parts[0] === 'live' && parts.length === 1) return liveStream(hub, parseTopics(query), req, res, () => listInstances(options.status));
    if (parts[0] !== 'instances') return sendJson(res, 404, { error: 'unknown path' });
    if (parts.length === 1) return sendJson(res, 200, await listInstances(options.status));
    const instance: Instance | undefined = await instanceByName(parts[1] ?? '');
    if (!instance) return sendJson(res, 404, { error: `No instance named ${JSON.stringify(parts[1])} is registered on this host.`, known: await registeredNames() });
    const [, , what, id, more] = parts;
    if (what === undefined) return sendJson(res, 200, { name: instance.name });
    if (what === 'terminals' && id === undefined) {
      const feed = await hub.acquire(instance.name);
      if (feed) hub.release(feed);
      return sendJson(res, 200, feed?.terminals ?? []);
    }
    if (what === 'terminals' && /^\d{1,2}$/.test(id ?? '') && more === 'input') {
      if (req.method !== 'POST') return sendJson(res, 405, { error: 'POST the keys' });
      if (!options.write) return sendJson(res, 403, { error: 'This view is read-only. Start it with agent-kernel web --write to type into terminals.' });
      if (req.headers['content-type'] !== 'application/json') return sendJson(res, 415, { error: 'send application/json: {"data": "..."}' });
      const body = JSON.parse(await readBody(req, MAX_PERSON_INPUT_BYTES * 8)) as { data?: unknown };
      if (typeof body.data !== 'string') return sendJson(res, 400, { error: 'send {"data": "the keys as text"}' });
      return sendJson(res, 200, { typed: await typeForPerson(instance, Number(id), body.data) });
    }
    if (what === 'ticks' && id === undefined) return sendJson(res, 200, await listTicks(instance));
    if (what === 'ticks' && /^\d{1,6}$/.test(id ?? '') && more === 'transcript') {
      const text = await readUntrustedTail(instance.paths.stateRoot, relativeInside(instance.paths.stateRoot, instance.paths.tickLog(Number(id))), TRANSCRIPT_MAX_BYTES);
      if (text === undefined) return sendJson(res, 404, { error: `tick ${id} has no transcript` });
      return sendJson(res, 200, parseTranscript(text));
    }
    if (what === 'mail' && id === undefined) return sendJson(res, 200, await conversations(instance));
    if (what === 'mail' && id !== undefined && more === 'withdraw') {
      if (req.method !== 'POST') return sendJson(res, 405, { error: 'POST to withdraw' });
      if (!options.write) return sendJson(res, 403, { error: `This view is read-only. Start it with agent-kernel web --write to withdraw messages.` });
      const record = await withdrawMessage(instance, id);
      return sendJson(res, 200, { withdrawn: record.id });
    }
    if (what === 'recordings' && id === undefined) return sendJson(res, 200, await listRecordings(instance));
    if (what === 'recordings' && id !== undefined && parseRecordingName(id)) {
      const read = await readUntrustedRange(instance.paths.recordings, id, { maxBytes: RECORDING_MAX_BYTES });
      if (!read) return sendJson(res, 404, { error: `no recording ${id}` });
      if (more === 'commands') return sendJson(res, 200, recordingCommands(read.data.toString('utf8')));
      return send(res, 200, read.data, RECORDING_TYPE);
    }
    return sendJson(res, 404, { error: 'unknown path' });
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = requestUrl(req);
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204, SECURITY_HEADERS);
      res.end();
      return;
    }
    const isPage = url.pathname === '/';
    const verdict = auth.check(req);
    if (verdict.kind === 'login') {
      res.writeHead(303, { ...SECURITY_HEADERS, location: verdict.location, 'set-cookie': verdict.cookie, 'cache-control': 'no-store' });
      res.end();
      return;
    }
    // The style sheet carries nothing secret, and the refusal page uses it.
    if (verdict.kind === 'refused' && !(url.pathname === '/style.css' && verdict.status === 401)) {
      if (isPage) return send(res, verdict.status, refusalPage(verdict.message), TYPES['.html']);
      return sendJson(res, verdict.status, { error: verdict.message });
    }
    if (req.method === 'POST' && req.headers.origin === undefined) {
      // A browser always sends Origin on POST; its absence means a request we did not expect.
      return sendJson(res, 403, { error: 'POST needs an Origin header' });
    }
    if (url.pathname.startsWith('/api/')) {
      const parts = url.pathname.slice('/api/'.length).split('/').filter(Boolean).map((p) => decodeURIComponent(p));
      return api(req, res, parts, url.searchParams);
    }
    const file = files.get(url.pathname);
    if (!file || (req.method !== 'GET' && req.method !== 'HEAD')) {
      if (req.headers.accept?.includes('text/html')) return send(res, 404, refusalPage(`Nothing at ${url.pathname}. The view is at /.`), TYPES['.html']);
      return sendJson(res, 404, { error: 'not found' });
    }
    const read = await readUntrustedRange(path.dirname(file), path.basename(file), { maxBytes: 16 * 1024 * 1024 });
    if (!read) return sendJson(res, 404, { error: 'not found' });
    return send(res, 200, read.data, TYPES[path.extname(file)] ?? 'application/octet-stream');
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.end();
        return;
      }
      sendJson(res, isCodedError(error) ? 400 : 500, { error: describeError(error) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/`,
    hub,
    close: () =>
      new Promise<void>((resolve) => {
        hub.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
