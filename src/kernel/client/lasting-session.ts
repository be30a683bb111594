import { type KernelLink, connectKernel } from './session-link.js';
import { LineSplitter } from '../lines.js';
import { type KernelClientKind, MAX_LINE_BYTES } from '../protocol.js';

/**
 * One MCP client's session on the instance's kernel that outlives the kernel. The client's
 * JSON-RPC lines go to the kernel; the kernel's come back with their delivery receipts
 * (protocol.ts), sent only once the client's side says a line reached the client.
 *
 * If the kernel goes away (killed, restarted by watch, replaced by an upgrade) the calls in
 * flight are answered with a note, and the session connects again as soon as a kernel answers,
 * repeating the client's initialize: the client keeps its MCP server, its next call is told to
 * log in again, and the next wait shows everything it has not seen. `serve`'s stdio bridge
 * (bridge.ts) holds one; `serve --http` one per HTTP session (kernel-relay.ts).
 * Node built-ins only: the bridge loads this before anything else.
 */

/** Lines from the kernel for the client, in order. */
export interface KernelLines {
  readonly lines: readonly string[];
  /** Line `index` reached the client (an HTTP reply written to its socket). */
  delivered(index: number): void;
  /** Every line of this batch reached the client, and all before it (written, in order, to one pipe). */
  allDelivered(): void;
}

export interface LastingSessionOptions {
  socketPath: string;
  client: KernelClientKind;
  /** The data directory the kernel must serve (checked on every connect). */
  dataDir: string;
  /** A session already open; without one, the session connects as it would after a restart. */
  first?: KernelLink;
  /** Longest time without a kernel before the session gives up (default 60 s: watch restarts one within seconds). */
  reconnectMs?: number;
  /** Hand lines to the client. */
  deliver(lines: KernelLines): void;
  /** No kernel answered in time: the calls left open were answered (through deliver); the client must start again. */
  gaveUp(): void;
  /** One line for the person or the log. */
  note(line: string): void;
}

const RECONNECT_POLL_MS = 100;
const DEFAULT_RECONNECT_MS = 60_000;
/** The id a repeated initialize gets; its reply is not passed on. */
export const REPLAY_ID = 'agent-kernel-bridge-reinitialize';

export const KERNEL_RESTARTED =
  "agent-kernel's kernel restarted while this call ran. The terminals live on and nothing is lost: the next wait shows what this call would have. Call login() again, then carry on.";

/** Pure: what the client is told when no kernel came back. */
export function kernelGone(seconds: number): string {
  return (
    `agent-kernel's kernel has not answered for ${seconds} s (kernel-runner watch restarts it within seconds: is watch still running?). ` +
    'The terminals live on in the container and nothing is lost. Start agent-kernel serve again (with no kernel running it hosts one itself), then call login().'
  );
}

interface Request {
  readonly id: string | number;
  readonly method: string;
}

export class LastingSession {
  private link: KernelLink | undefined;
  private splitter = new LineSplitter(MAX_LINE_BYTES);
  /** Lines from the client waiting for a kernel. */
  private queued: string[] = [];
  /** Requests sent to the kernel and not answered yet, by their id as JSON. */
  private readonly inFlight = new Map<string, Request>();
  private initialize: string | undefined;
  private initialized: string | undefined;
  private initializeAnswered = false;
  /** Lines received on the current connection (the kernel numbers them from 1). */
  private received = 0;
  private closed = false;
  private readonly reconnectMs: number;

  constructor(private readonly options: LastingSessionOptions) {
    this.reconnectMs = options.reconnectMs ?? DEFAULT_RECONNECT_MS;
    if (options.first) this.attach(options.first);
    else void this.connect();
  }

  /** One JSON-RPC line from the client. */
  send(line: string): void {
    if (this.closed) return;
    const message = classify(line);
    if (message.kind === 'request') {
      if (message.request.method === 'initialize') this.initialize = line;
      this.inFlight.set(JSON.stringify(message.request.id), message.request);
    } else if (message.kind === 'initialized') {
      this.initialized = line;
    } else if (message.kind === 'cancelled') {
      // The kernel does not answer a cancelled call; nor will a restart.
      this.inFlight.delete(message.requestId);
    }
    if (this.link) this.link.socket.write(`${line}\n`);
    else this.queued.push(line);
  }

  /** The client has gone: end the session (the kernel ends its side). Resolves once closed, within 2 s. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    const link = this.link;
    this.link = undefined;
    if (!link || link.socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      link.socket.once('close', () => resolve());
      setTimeout(resolve, 2000).unref();
      link.socket.end();
    });
  }

  private attach(link: KernelLink): void {
    this.link = link;
    this.received = 0;
    this.splitter = new LineSplitter(MAX_LINE_BYTES);
    link.socket.on('data', (chunk: Buffer) => this.fromKernel(link, chunk));
    link.socket.once('close', () => this.lost(link));
    link.socket.on('error', () => {
      // 'close' follows.
    });
    if (link.head.length > 0) this.fromKernel(link, link.head);
    link.socket.resume();
  }

  private fromKernel(link: KernelLink, chunk: Buffer): void {
    if (link !== this.link) return;
    let lines: string[];
    try {
      lines = this.splitter.push(chunk);
    } catch (error) {
      this.options.note(`agent-kernel serve: the kernel sent ${(error as Error).message}; reconnecting.`);
      link.socket.destroy();
      return;
    }
    const out: string[] = [];
    const numbers: number[] = [];
    for (const line of lines) {
      const number = ++this.received;
      const id = responseId(line);
      if (id === JSON.stringify(REPLAY_ID)) {
        // The reply to our own repeated initialize: the client never asked; it reached us.
        link.socket.write(`{"ack":${number}}\n`);
        continue;
      }
      if (id !== undefined) {
        if (this.inFlight.get(id)?.method === 'initialize') this.initializeAnswered = true;
        this.inFlight.delete(id);
      }
      out.push(line);
      numbers.push(number);
    }
    if (out.length === 0) return;
    const receipt = (text: string) => {
      if (link === this.link && !link.socket.destroyed) link.socket.write(`${text}\n`);
    };
    this.options.deliver({
      lines: out,
      delivered: (index) => {
        const number = numbers[index];
        if (number !== undefined) receipt(`{"ack":${number}}`);
      },
      allDelivered: () => receipt(`{"upto":${numbers.at(-1) ?? 0}}`),
    });
  }

  private lost(link: KernelLink): void {
    if (link !== this.link) return;
    this.link = undefined;
    if (this.closed) return;
    // Calls in flight end here (their replies went with the connection); an unanswered initialize is sent again instead.
    const answers: string[] = [];
    for (const [key, request] of this.inFlight) {
      if (request.method === 'initialize') continue;
      answers.push(errorReply(request, KERNEL_RESTARTED));
      this.inFlight.delete(key);
    }
    if (answers.length > 0) this.options.deliver(unacknowledged(answers));
    this.options.note('agent-kernel serve: the kernel went away; connecting again when it is back.');
    void this.connect();
  }

  /** Connect (again) as soon as a kernel of this data directory answers; give up after reconnectMs. */
  private async connect(): Promise<void> {
    const deadline = Date.now() + this.reconnectMs;
    while (!this.closed && Date.now() < deadline) {
      let link: KernelLink;
      try {
        link = await connectKernel(this.options.socketPath, { client: this.options.client, timeoutMs: 5000 });
      } catch {
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_POLL_MS));
        continue;
      }
      if (this.closed) {
        link.socket.destroy();
        return;
      }
      if (link.hello.dataDir !== this.options.dataDir) {
        link.socket.destroy();
        this.options.note(`agent-kernel serve: the kernel at ${this.options.socketPath} now serves ${link.hello.dataDir}, not ${this.options.dataDir}; giving up.`);
        break;
      }
      this.attach(link);
      this.resume(link);
      this.options.note(`agent-kernel serve: connected to the kernel (PID ${link.hello.pid}).`);
      return;
    }
    if (this.closed) return;
    this.giveUp();
  }

  /** A new connection: the client's handshake again, then what waited. */
  private resume(link: KernelLink): void {
    const lines: string[] = [];
    if (this.initialize !== undefined) {
      if (this.initializeAnswered) {
        const message = JSON.parse(this.initialize) as Record<string, unknown>;
        lines.push(JSON.stringify({ ...message, id: REPLAY_ID }));
        if (this.initialized !== undefined) lines.push(this.initialized);
      } else {
        lines.push(this.initialize);
      }
    }
    lines.push(...this.queued.filter((line) => line !== this.initialize && line !== this.initialized));
    this.queued = [];
    if (lines.length > 0) link.socket.write(`${lines.join('\n')}\n`);
  }

  private giveUp(): void {
    const gone = kernelGone(Math.round(this.reconnectMs / 1000));
    this.options.note(`agent-kernel serve: ${gone}`);
    this.closed = true;
    const answers = [...this.inFlight.values()].map((request) => errorReply(request, gone));
    this.inFlight.clear();
    this.queued = [];
    if (answers.length > 0) this.options.deliver(unacknowledged(answers));
    this.options.gaveUp();
  }
}

/** Lines the session answered itself: nothing to tell the kernel. */
function unacknowledged(lines: string[]): KernelLines {
  return { lines, delivered: () => {}, allDelivered: () => {} };
}

type ClientMessage = { kind: 'request'; request: Request } | { kind: 'initialized' } | { kind: 'cancelled'; requestId: string } | { kind: 'other' };

/** Pure: what a line from the client is, as far as the session cares. */
function classify(line: string): ClientMessage {
  let message: { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
  try {
    message = JSON.parse(line) as typeof message;
  } catch {
    // Not JSON: the kernel answers it with a parse error.
    return { kind: 'other' };
  }
  if (typeof message !== 'object' || message === null) return { kind: 'other' };
  const { id, method } = message;
  if ((typeof id === 'string' || typeof id === 'number') && typeof method === 'string') return { kind: 'request', request: { id, method } };
  if (method === 'notifications/initialized') return { kind: 'initialized' };
  const cancelled = message.params?.requestId;
  if (method === 'notifications/cancelled' && (typeof cancelled === 'string' || typeof cancelled === 'number')) return { kind: 'cancelled', requestId: JSON.stringify(cancelled) };
  return { kind: 'other' };
}

/** Pure: the id (as JSON) of a JSON-RPC response line, or undefined. */
function responseId(line: string): string | undefined {
  try {
    const message = JSON.parse(line) as { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
    if (message.method === undefined && (message.result !== undefined || message.error !== undefined) && (typeof message.id === 'string' || typeof message.id === 'number')) {
      return JSON.stringify(message.id);
    }
  } catch {
    // not JSON
  }
  return undefined;
}

/** Pure: the answer to a call the session cannot complete: a tool error the model reads, or a JSON-RPC error. */
export function errorReply(request: Request, text: string): string {
  if (request.method === 'tools/call') {
    return JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text }], isError: true } });
  }
  return JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: -32603, message: text } });
}
