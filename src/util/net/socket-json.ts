import http from 'node:http';

/** Past this, an answer is refused unread (a socket's answers are small JSON documents). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export interface SocketJsonRequest {
  method?: 'GET' | 'POST';
  /** Reject (code ETIMEDOUT) when nothing answers within this long; 0: no limit. */
  timeoutMs: number;
  /** Who answers, for the errors: "the kernel at /run/x.sock". */
  who: string;
  /** Sent as the request's body (JSON). */
  body?: string;
}

const failure = (message: string, code: string) => Object.assign(new Error(message), { code });

/**
 * One HTTP request over a unix socket whose answer is JSON: its status and parsed body (still
 * unknown: the caller validates it). Node built-ins only. Rejects with code ETIMEDOUT when
 * nothing answers in time, and with code EBADANSWER when the answer is not JSON or too big.
 */
export async function requestSocketJson(socketPath: string, urlPath: string, options: SocketJsonRequest): Promise<{ status: number; body: unknown }> {
  let text = '';
  const status = await socketRequest(socketPath, urlPath, { ...options, idleMs: options.timeoutMs }, (chunk) => {
    text += chunk;
  });
  try {
    return { status, body: JSON.parse(text) as unknown };
  } catch (error) {
    throw failure(`${options.who} answered ${urlPath} with something that is not JSON: ${(error as Error).message}`, 'EBADANSWER');
  }
}

export interface SocketJsonLinesRequest {
  method?: 'GET' | 'POST';
  /** Reject (code ETIMEDOUT) when the answer stays silent this long (between any two lines). */
  idleMs: number;
  /** Reject (code ETIMEDOUT) when the answer has not ended after this long; 0: no limit. */
  deadlineMs: number;
  who: string;
  /** Ends the request (rejecting with its reason). */
  signal?: AbortSignal;
}

/**
 * One HTTP request over a unix socket whose answer is JSON lines, sent as they happen (a long
 * operation's progress, then its result): `onLine` gets each line parsed; resolves with the status
 * and the last line. A silent answer fails after `idleMs`, a long one after `deadlineMs`.
 */
export async function requestSocketJsonLines(
  socketPath: string,
  urlPath: string,
  options: SocketJsonLinesRequest,
  onLine: (value: unknown) => void,
): Promise<{ status: number; last: unknown }> {
  let buffer = '';
  let last: unknown;
  const take = (line: string) => {
    if (!line.trim()) return;
    try {
      last = JSON.parse(line) as unknown;
    } catch (error) {
      throw failure(`${options.who} answered ${urlPath} with a line that is not JSON: ${(error as Error).message}`, 'EBADANSWER');
    }
    onLine(last);
  };
  // A long operation may say a lot in all: only one line is held at a time, and it is bounded.
  const status = await socketRequest(socketPath, urlPath, { ...options, maxBytes: Infinity }, (chunk) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      take(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
    }
    if (buffer.length > MAX_ANSWER_BYTES) throw failure(`${options.who} answered ${urlPath} with a line of more than ${MAX_ANSWER_BYTES} characters`, 'EBADANSWER');
  });
  take(buffer);
  return { status, last };
}

/** The request itself: `onText` gets the answer's text as it comes; resolves with its status at its end. */
function socketRequest(
  socketPath: string,
  urlPath: string,
  options: { method?: 'GET' | 'POST'; idleMs: number; deadlineMs?: number; who: string; maxBytes?: number; body?: string; signal?: AbortSignal },
  onText: (text: string) => void,
): Promise<number> {
  const { method = 'GET', idleMs, deadlineMs = 0, who, maxBytes = MAX_ANSWER_BYTES, body, signal } = options;
  return new Promise((resolve, reject) => {
    let failed: Error | undefined;
    const fail = (error: Error) => {
      failed ??= error;
      req.destroy(failed);
    };
    // Not the global agent: Node 20's has a 5 s socket timeout of its own, which would end a request we allow longer.
    const headers = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = http.request({ socketPath, path: urlPath, method, agent: false, headers }, (res) => {
      let size = 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        size += Buffer.byteLength(chunk);
        if (size > maxBytes) return fail(failure(`${who} answered ${urlPath} with more than ${maxBytes} bytes`, 'EBADANSWER'));
        try {
          onText(chunk);
        } catch (error) {
          fail(error as Error);
        }
      });
      res.on('end', () => (failed ? reject(failed) : resolve(res.statusCode ?? 0)));
      res.on('error', (error) => reject(failed ?? error));
    });
    if (idleMs > 0) req.setTimeout(idleMs, () => fail(failure(`${who} did not answer ${urlPath} within ${idleMs} ms`, 'ETIMEDOUT')));
    const deadline = deadlineMs > 0 ? setTimeout(() => fail(failure(`${who} did not finish ${urlPath} within ${Math.round(deadlineMs / 1000)} s`, 'ETIMEDOUT')), deadlineMs) : undefined;
    const abort = () => fail(signal?.reason instanceof Error ? signal.reason : failure(`${urlPath} was aborted`, 'ABORT_ERR'));
    if (signal?.aborted) abort();
    signal?.addEventListener('abort', abort, { once: true });
    req.once('close', () => {
      clearTimeout(deadline);
      signal?.removeEventListener('abort', abort);
    });
    req.once('error', (error) => reject(failed ?? error));
    req.end(body);
  });
}
