import { createHash } from 'node:crypto';
import { mkdir, unlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { ensurePrivateSocketDir, shortPrivateDir } from '../../kernel/socket-path.js';

/**
 * How the hooks Claude Code runs (tiny `cli/hook.ts` processes) reach the runner: one JSON
 * line each way over a unix socket under the host-private `<state>/private/`. Kept free of heavy imports:
 * cli/hook.ts loads this on every tool call.
 */
export type HookEventKind = 'pre-compact' | 'post-tool-use' | 'stop';

export const HOOK_EVENT_KINDS: readonly HookEventKind[] = ['pre-compact', 'post-tool-use', 'stop'];

/** What the hook process prints and exits with. */
export interface HookReply {
  stdout?: string;
  exitCode?: number;
}

export type HookHandler = (kind: HookEventKind, input: Record<string, unknown>) => Promise<HookReply>;

/** Unix socket paths are limited to about 107 bytes; a long state path falls back to this user's private socket folder. */
const MAX_SOCKET_PATH = 100;

export function hookSocketPath(privateStateDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const preferred = path.join(privateStateDir, 'runner.sock');
  if (Buffer.byteLength(preferred) <= MAX_SOCKET_PATH) return preferred;
  const digest = createHash('sha256').update(path.resolve(privateStateDir)).digest('hex').slice(0, 16);
  return path.join(shortPrivateDir(env), `runner-${digest}.sock`);
}

/** Pure: one request line, checked (a kind we handle, an object for input); throws naming what is wrong. */
export function parseHookRequest(line: string): { kind: HookEventKind; input: Record<string, unknown> } {
  const request = JSON.parse(line) as unknown;
  if (typeof request !== 'object' || request === null) throw new Error(`hook request is not an object: ${line.slice(0, 80)}`);
  const { kind, input } = request as { kind?: unknown; input?: unknown };
  if (!HOOK_EVENT_KINDS.includes(kind as HookEventKind)) throw new Error(`hook request has an unknown kind ${JSON.stringify(kind)}; expected one of ${HOOK_EVENT_KINDS.join(', ')}`);
  if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input))) throw new Error('hook request input is not an object');
  return { kind: kind as HookEventKind, input: (input ?? {}) as Record<string, unknown> };
}

export interface HookChannel {
  readonly socketPath: string;
  close(): Promise<void>;
}

export async function listenHookChannel(socketPath: string, handler: HookHandler, onError: (error: unknown) => void): Promise<HookChannel> {
  await mkdir(path.dirname(socketPath), { recursive: true, mode: 0o700 });
  // Its folder is this user's alone (not a link, 0700): a socket there cannot be another user's.
  ensurePrivateSocketDir(socketPath, false);
  await unlink(socketPath).catch(() => {});
  const server = net.createServer((socket) => {
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('error', onError);
    const onData = (chunk: string): void => {
      buffer += chunk;
      const newline = buffer.indexOf('\n');
      if (newline < 0) return;
      // One request per connection: whatever follows the first line is never handled.
      socket.off('data', onData);
      const line = buffer.slice(0, newline);
      buffer = '';
      void (async () => {
        let reply: HookReply = {};
        try {
          const request = parseHookRequest(line);
          reply = await handler(request.kind, request.input);
        } catch (error) {
          onError(error);
        }
        socket.end(JSON.stringify(reply) + '\n');
      })();
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        void unlink(socketPath).catch(() => {});
      }),
  };
}

/** Ask the runner; `undefined` when it cannot be reached in time (the caller fails open). */
export function askRunner(socketPath: string, kind: HookEventKind, input: unknown, timeoutMs: number): Promise<HookReply | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    let buffer = '';
    const finish = (reply: HookReply | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(reply);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    const socket = net.createConnection(socketPath, () => socket.write(JSON.stringify({ kind, input }) + '\n'));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (buffer += chunk));
    socket.on('end', () => {
      try {
        finish(JSON.parse(buffer) as HookReply);
      } catch {
        finish(undefined);
      }
    });
    socket.on('error', () => finish(undefined));
  });
}
