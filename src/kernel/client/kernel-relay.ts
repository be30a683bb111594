import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../log/logger.js';
import { LastingSession } from './lasting-session.js';
import type { SessionBackend } from '../../server/http.js';

/**
 * `serve --http` while the instance's kernel runs: each HTTP session is one lasting session on
 * the kernel's socket (lasting-session.ts), so an HTTP client keeps its session when the
 * kernel restarts (watch restarts it, an upgrade replaces it): a call in flight is told to log
 * in again, the next calls reach the new kernel. A reply's receipt (`{"ack":n}`) goes back only
 * once the HTTP transport has written it to the client's socket, so what a wait showed counts as
 * seen only then, as with sessions of this process. No kernel for `reconnectMs` (default 30 s,
 * below an HTTP client's usual 60 s request timeout, so that the client reads why): the session
 * ends, its open calls told how to go on.
 */
export function kernelSessions(kernel: { socketPath: string; dataDir: string; reconnectMs?: number }, logger: Logger): SessionBackend {
  return async (transport) => {
    /** Progress tokens of requests in flight → the request: its notifications go on that request's stream. */
    const progressOf = new Map<string | number, string | number>();
    /** Messages on their way to the client. */
    const sending = new Set<Promise<void>>();

    const toClient = (line: string, delivered: () => void): void => {
      let message: JSONRPCMessage;
      try {
        message = JSON.parse(line) as JSONRPCMessage;
      } catch {
        return;
      }
      const related = relatedRequest(message, progressOf);
      const sent = transport.send(message, related === undefined ? undefined : { relatedRequestId: related }).then(
        () => {
          if ('id' in message && ('result' in message || 'error' in message)) {
            for (const [token, id] of progressOf) if (id === message.id) progressOf.delete(token);
          }
          delivered();
        },
        (error: unknown) => logger.debug({ err: error, session: transport.sessionId }, 'a reply did not reach the HTTP client'),
      );
      sending.add(sent);
      void sent.finally(() => sending.delete(sent));
    };
    const session = new LastingSession({
      socketPath: kernel.socketPath,
      client: 'person',
      dataDir: kernel.dataDir,
      reconnectMs: kernel.reconnectMs ?? 30_000,
      deliver: (batch) => batch.lines.forEach((line, index) => toClient(line, () => batch.delivered(index))),
      gaveUp: () => {
        logger.warn({ session: transport.sessionId }, 'no kernel came back; ending this HTTP session');
        // Once the answers to its open calls (handed over just before) have gone out.
        void Promise.allSettled([...sending]).then(() => transport.close());
      },
      note: (line) => logger.info({ session: transport.sessionId }, line),
    });
    transport.onmessage = (message) => {
      const token = progressToken(message);
      if (token !== undefined && 'id' in message && message.id !== undefined) progressOf.set(token, message.id);
      session.send(JSON.stringify(message));
    };
    return { cleanup: () => session.close() };
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
