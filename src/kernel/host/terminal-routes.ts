import type http from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { CodedError, describeError, isCodedError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { appendEvent } from '../../observe/events/event-log.js';
import type { TerminalsRuntime } from '../../server/terminals/runtime.js';
import type { Terminals } from '../../server/terminals/terminals.js';
import { BodyTooLarge, readBody, sendJson } from '../../util/net/http-json.js';
import { MAX_PERSON_KEYS_BYTES, SCREEN_ALIVE_MS, SCREEN_BEHIND_BYTES, SCREEN_HISTORY_MAX, type ScreenLine } from '../protocol.js';

/** Output sent together on a screen stream. */
const FLUSH_MS = 20;

export interface TerminalRouteDeps {
  runtime: TerminalsRuntime;
  instance: { paths: { events: string } };
  logger: Logger;
}

/** `GET /v1/terminals/N/screen` and `POST /v1/terminals/N/keys` (protocol.ts); false: not one of these. */
export function answerTerminalRequest(req: http.IncomingMessage, res: http.ServerResponse, deps: TerminalRouteDeps): boolean {
  const url = new URL(req.url ?? '/', 'http://kernel');
  const match = /^\/v1\/terminals\/(\d{1,2})\/(screen|keys)$/.exec(url.pathname);
  if (!match) return false;
  const tty = Number(match[1]);
  const fail = (error: unknown) => {
    const status = !isCodedError(error) ? 500 : error.code === 'TTY_OUT_OF_RANGE' || error.code === 'TTY_NOT_FOUND' ? 404 : 400;
    sendJson(res, error instanceof BodyTooLarge ? 413 : status, { error: describeError(error), ...(isCodedError(error) ? { code: error.code } : {}) });
  };
  const terminals = deps.runtime.current;
  if (!terminals?.watchScreen || !terminals.typeAsPerson) {
    sendJson(res, 503, { error: 'The terminals are starting (or starting again): ask again in a moment.' });
    return true;
  }
  if (match[2] === 'screen' && req.method === 'GET') {
    const history = Math.min(SCREEN_HISTORY_MAX, Math.max(0, Number(url.searchParams.get('history') ?? 0) || 0));
    streamScreen(terminals, tty, history, res, deps.logger).catch(fail);
  } else if (match[2] === 'keys' && req.method === 'POST') {
    typeKeys(terminals, tty, req, deps).then((typed) => sendJson(res, 200, { typed }), fail);
  } else {
    sendJson(res, 405, { error: `${match[2] === 'screen' ? 'GET' : 'POST'} ${url.pathname}` });
  }
  return true;
}

/** The screen, then what the terminal prints, as JSON lines, until the screen no longer follows (or the reader leaves or falls behind). */
async function streamScreen(terminals: Terminals, tty: number, history: number, res: http.ServerResponse, logger: Logger): Promise<void> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let flushTimer: NodeJS.Timeout | undefined;
  let open = true;
  const line = (value: ScreenLine) => res.write(`${JSON.stringify(value)}\n`);
  const flush = () => {
    flushTimer = undefined;
    if (!open || pending === '') return;
    line({ out: pending });
    pending = '';
  };
  const end = (why: string) => {
    if (!open) return;
    open = false;
    clearTimeout(flushTimer);
    clearInterval(alive);
    stopWatch();
    if (!res.destroyed && !res.writableEnded) {
      if (pending !== '') line({ out: pending });
      line({ ended: why });
      res.end();
    }
    logger.debug({ tty, why }, 'screen stream ended');
  };
  const alive = setInterval(() => res.headersSent && line({ alive: true }), SCREEN_ALIVE_MS);
  let stopWatch: () => void = () => undefined;
  // Registered first: a reader that leaves while the screen is taken must not leave the watch behind.
  res.once('close', () => end('the reader left'));
  const started = await terminals.watchScreen!(
    tty,
    history,
    (data) => {
      if (!open) return;
      pending += decoder.write(data);
      // A reader that does not keep up starts again from a fresh screen instead of holding the kernel's memory.
      if (res.writableLength + pending.length > SCREEN_BEHIND_BYTES) return end('the reader fell behind');
      flushTimer ??= setTimeout(flush, FLUSH_MS);
    },
    (why) => end(why),
  ).catch((error: unknown) => {
    // Refused (no such terminal): the caller answers with the error, and nothing more is written here.
    open = false;
    clearInterval(alive);
    throw error;
  });
  stopWatch = () => started.stop();
  if (!open) return started.stop();
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  line({ screen: { cols: started.screen.cols, rows: started.screen.rows, ansi: started.screen.ansi } });
  logger.debug({ tty, history }, 'screen stream opened');
}

/** A person's keys: typed in turn with the agent's calls, and logged as an event the agent is shown at its next wait. */
async function typeKeys(terminals: Terminals, tty: number, req: http.IncomingMessage, deps: TerminalRouteDeps): Promise<number> {
  const body = await readBody(req, MAX_PERSON_KEYS_BYTES * 8);
  let data: unknown;
  try {
    data = (JSON.parse(body) as { data?: unknown }).data;
  } catch {
    data = undefined;
  }
  if (typeof data !== 'string') throw new CodedError('USAGE', 'Send {"data": "the keys as text"}.');
  const bytes = Buffer.from(data, 'utf8');
  if (bytes.length === 0) return 0;
  if (bytes.length > MAX_PERSON_KEYS_BYTES) throw new CodedError('USAGE', `At most ${MAX_PERSON_KEYS_BYTES} bytes at a time; got ${bytes.length}.`);
  const typed = await terminals.typeAsPerson!(tty, bytes);
  const key = bytes.length === 1 && bytes[0]! < 0x20 ? `C-${String.fromCharCode(bytes[0]! + 0x60)}` : undefined;
  await appendEvent(deps.instance.paths.events, { type: 'person.typed', tty, bytes: bytes.length, ...(key ? { key } : {}) });
  return typed;
}
