import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../log/logger.js';
import { connectKernel } from '../../kernel/link.js';
import { LineSplitter } from '../../kernel/lines.js';
import { MAX_LINE_BYTES } from '../../kernel/protocol.js';
import type { SessionBackend } from '../http.js';

/**
 * `serve --http` while the instance's kernel runs: each HTTP session is one session on the
 * kernel's socket. Messages pass both ways; a reply's receipt (`{"ack":n}`) goes back only once
 * the HTTP transport has written it to the client's socket, so what a wait showed counts as seen
 * only then, as with sessions of this process. The kernel going away ends the session (the
 * client initializes a new one, which reaches the kernel watch has started again).
 */
export function kernelSessions(socketPath: string, logger: Logger): SessionBackend {
  return async (transport) => {
    const link = await connectKernel(socketPath, { client: 'person' });
    const splitter = new LineSplitter(MAX_LINE_BYTES);
    /** Progress tokens of requests in flight → the request: its notifications go on that request's stream. */
    const progressOf = new Map<string | number, string | number>();
    let received = 0;
    let ended = false;

    const toClient = (line: string, number: number): void => {
      let message: JSONRPCMessage;
      try {
        message = JSON.parse(line) as JSONRPCMessage;
      } catch {
        return;
      }
      const related = relatedRequest(message, progressOf);
      transport.send(message, related === undefined ? undefined : { relatedRequestId: related }).then(
        () => {
          if ('id' in message && ('result' in message || 'error' in message)) {
            for (const [token, id] of progressOf) if (id === message.id) progressOf.delete(token);
          }
          if (!link.socket.destroyed) link.socket.write(`{"ack":${number}}\n`);
        },
        (error: unknown) => logger.debug({ err: error, session: transport.sessionId }, 'a reply did not reach the HTTP client'),
      );
    };
    link.socket.on('data', (chunk: Buffer) => {
      let lines: string[];
      try {
        lines = splitter.push(chunk);
      } catch (error) {
        logger.warn({ err: error }, 'the kernel sent a line over the limit; ending the session');
        link.socket.destroy();
        return;
      }
      for (const line of lines) toClient(line, ++received);
    });
    if (link.head.length > 0) link.socket.emit('data', link.head);
    link.socket.on('error', () => {
      // 'close' follows.
    });
    link.socket.once('close', () => {
      if (ended) return;
      ended = true;
      logger.warn({ session: transport.sessionId }, 'the kernel went away; ending this HTTP session (the client starts a new one)');
      void transport.close();
    });

    transport.onmessage = (message) => {
      const token = progressToken(message);
      if (token !== undefined && 'id' in message && message.id !== undefined) progressOf.set(token, message.id);
      link.socket.write(`${JSON.stringify(message)}\n`);
    };
    return {
      cleanup: async () => {
        ended = true;
        link.socket.end();
      },
    };
  };
}

function progressToken(message: JSONRPCMessage): string | number | undefined {
  const meta = 'params' in message ? (message.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta : undefined;
  const token = meta?.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

/** The request a message from the kernel belongs to: a reply its own, a progress notification its token's. */
function relatedRequest(message: JSONRPCMessage, progressOf: ReadonlyMap<string | number, string | number>): string | number | undefined {
  if ('id' in message && !('method' in message)) return message.id;
  if ('method' in message && message.method === 'notifications/progress') {
    const token = (message.params as { progressToken?: unknown } | undefined)?.progressToken;
    if (typeof token === 'string' || typeof token === 'number') return progressOf.get(token);
  }
  return undefined;
}
