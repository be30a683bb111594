import net from 'node:net';
import { CodedError } from '../../errors.js';
import { CLIENT_HEADER, HELLO_HEADER, type KernelClientKind, type KernelHello, MCP_UPGRADE } from '../protocol.js';
import { ensurePrivateSocketDir } from '../socket-path.js';

/**
 * One MCP session on the kernel's socket (protocol.ts): the upgrade asked for and answered on a
 * plain socket. `serve` does this first, before anything else is loaded, at every tick's start:
 * node:http would add its whole client (a few ms at every login) for one request and one answer
 * whose form the kernel fixes (host/kernel-host.ts). The small JSON requests are link.ts's.
 */

export interface KernelLink {
  readonly hello: KernelHello;
  /** The session's stream (paused until its reader attaches and resumes it): JSON-RPC lines from the kernel, receipts and JSON-RPC lines to it. */
  readonly socket: net.Socket;
  /** Bytes the kernel sent right after the upgrade, before `socket` was handed over. */
  readonly head: Buffer;
}

/** An answer's head larger than this is not the kernel's. */
const MAX_HEAD_BYTES = 64 * 1024;

/** Open one MCP session on the kernel's socket. Rejects with ENOENT/ECONNREFUSED (isNoKernel) when none listens. */
export function connectKernel(socketPath: string, options: { client: KernelClientKind; timeoutMs?: number }): Promise<KernelLink> {
  ensurePrivateSocketDir(socketPath, false);
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let received = Buffer.alloc(0);
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    };
    const unreachable = (why: string) => fail(new CodedError('KERNEL_UNREACHABLE', `The kernel at ${socketPath} ${why}`));
    const timer = setTimeout(() => fail(Object.assign(new Error(`the kernel at ${socketPath} did not answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
    const closedEarly = () => unreachable('closed the connection before it answered.');
    socket.once('error', fail);
    socket.once('end', closedEarly);
    socket.once('connect', () => socket.write(`GET /v1/mcp HTTP/1.1\r\nhost: kernel\r\nconnection: Upgrade\r\nupgrade: ${MCP_UPGRADE}\r\n${CLIENT_HEADER}: ${options.client}\r\n\r\n`));
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) {
        if (received.length > MAX_HEAD_BYTES) unreachable('answered with something that is not HTTP.');
        return;
      }
      socket.off('data', onData);
      socket.off('end', closedEarly);
      const { status, headers } = parseHead(received.subarray(0, end).toString('utf8'));
      const rest = received.subarray(end + 4);
      if (status !== 101) {
        // A refusal (the session cap, a bad request): its JSON body, up to the end the kernel closes.
        const body: Buffer[] = [rest];
        socket.on('data', (more: Buffer) => body.push(more));
        socket.once('end', () => unreachable(`refused a session (${status}): ${messageOf(Buffer.concat(body))}`));
        return;
      }
      let hello: KernelHello;
      try {
        hello = JSON.parse(headers.get(HELLO_HEADER) ?? '') as KernelHello;
      } catch (error) {
        unreachable(`answered without saying who it is: ${(error as Error).message}`);
        return;
      }
      clearTimeout(timer);
      socket.off('error', fail);
      // Nothing is read until the session's reader attaches (it resumes the stream).
      socket.pause();
      resolve({ hello, socket, head: rest });
    };
    socket.on('data', onData);
  });
}

/** Pure: an HTTP/1.1 answer's status and headers (names in lower case). */
export function parseHead(text: string): { status: number; headers: Map<string, string> } {
  const [statusLine = '', ...lines] = text.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN);
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { status, headers };
}

function messageOf(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
  } catch {
    // not JSON
  }
  return body.toString('utf8').slice(0, 500);
}
