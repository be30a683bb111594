import http from 'node:http';

/** Past this, an answer is refused unread (a socket's answers are small JSON documents). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export interface SocketJsonRequest {
  method?: 'GET' | 'POST';
  /** Reject (code ETIMEDOUT) when nothing answers within this long; 0: no limit. */
  timeoutMs: number;
  /** Who answers, for the errors: "the kernel at /run/x.sock". */
  who: string;
}

/**
 * One HTTP request over a unix socket whose answer is JSON: its status and parsed body (still
 * unknown: the caller validates it). Node built-ins only. Rejects with code ETIMEDOUT when
 * nothing answers in time, and with code EBADANSWER when the answer is not JSON or too big.
 */
export function requestSocketJson(socketPath: string, urlPath: string, options: SocketJsonRequest): Promise<{ status: number; body: unknown }> {
  const { method = 'GET', timeoutMs, who } = options;
  const failure = (message: string, code: string) => Object.assign(new Error(message), { code });
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, path: urlPath, method, ...(timeoutMs > 0 ? { timeout: timeoutMs } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) req.destroy(failure(`${who} answered ${urlPath} with more than ${MAX_ANSWER_BYTES} bytes`, 'EBADANSWER'));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
        } catch (error) {
          reject(failure(`${who} answered ${urlPath} with something that is not JSON: ${(error as Error).message}`, 'EBADANSWER'));
        }
      });
      res.on('error', reject);
    });
    req.once('timeout', () => req.destroy(failure(`${who} did not answer ${urlPath} within ${timeoutMs} ms`, 'ETIMEDOUT')));
    req.once('error', reject);
    req.end();
  });
}
