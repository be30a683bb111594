import type { Readable, Writable } from 'node:stream';
import { type KernelLink, connectKernel } from './link.js';
import { LineSplitter } from './lines.js';
import { type KernelClientKind, MAX_LINE_BYTES } from './protocol.js';

/**
 * `agent-kernel serve` while the instance's kernel runs: the MCP client's stdio, passed line
 * for line to one session on the kernel's socket. After writing the kernel's lines to stdout
 * (a pipe: written when the callback fires) it sends a receipt, so that what a wait showed
 * counts as seen only once its reply reached the client's pipe, as with a server of its own.
 *
 * If the kernel goes away (killed, restarted by watch, replaced by an upgrade) the bridge
 * answers the calls in flight with a note, and connects again as soon as a kernel answers,
 * repeating the client's initialize, so the client keeps its MCP server: its next call is
 * told to log in again, and the next wait shows everything it has not seen.
 */

export interface BridgeOptions {
  socketPath: string;
  client: KernelClientKind;
  /** The session already open (the caller connected to see that a kernel runs). */
  first: KernelLink;
  input: Readable;
  output: Writable;
  /** Longest time without a kernel before the bridge gives up (default 60 s: watch restarts one within seconds). */
  reconnectMs?: number;
  /** The data directory the kernel must serve (checked on every reconnect). */
  dataDir: string;
  /** One line for the person or the log (stderr). */
  note: (line: string) => void;
}

const RECONNECT_POLL_MS = 100;
/** The id the bridge gives a repeated initialize; its reply is not passed on. */
const REPLAY_ID = 'agent-kernel-bridge-reinitialize';

export const KERNEL_RESTARTED =
  "agent-kernel's kernel restarted while this call ran. The terminals live on and nothing is lost: the next wait shows what this call would have. Call login() again, then carry on.";

interface Request {
  readonly id: string | number;
  readonly method: string;
}

/** Resolves with the exit code once the client has gone (0) or no kernel came back in time (1). */
export function bridgeStdio(options: BridgeOptions): Promise<number> {
  return new Bridge(options).run();
}

class Bridge {
  private link: KernelLink | undefined;
  private splitter = new LineSplitter(MAX_LINE_BYTES);
  private readonly fromClient = new LineSplitter(MAX_LINE_BYTES);
  /** Lines from the client waiting for a kernel. */
  private queued: string[] = [];
  /** Requests sent to the kernel and not answered yet, by their id as JSON. */
  private readonly inFlight = new Map<string, Request>();
  private initialize: string | undefined;
  private initialized: string | undefined;
  private initializeAnswered = false;
  /** Lines received on the current session, and how many of them were handed to the client. */
  private received = 0;
  private clientGone = false;
  private finish: (code: number) => void = () => {};

  constructor(private readonly options: BridgeOptions) {}

  run(): Promise<number> {
    const done = new Promise<number>((resolve) => {
      this.finish = (code) => {
        this.finish = () => {};
        resolve(code);
      };
    });
    const { input, output } = this.options;
    input.on('data', (chunk: Buffer) => this.fromClientData(chunk));
    input.once('end', () => this.clientEnded());
    input.once('error', () => this.clientEnded());
    output.once('error', () => this.clientEnded());
    this.attach(this.options.first);
    return done;
  }

  private fromClientData(chunk: Buffer): void {
    let lines: string[];
    try {
      lines = this.fromClient.push(chunk);
    } catch (error) {
      this.options.note(`agent-kernel serve: the client sent ${(error as Error).message}; closing.`);
      this.clientEnded();
      return;
    }
    for (const line of lines) {
      const request = requestOf(line);
      if (request?.method === 'initialize') this.initialize = line;
      else if (line.includes('"notifications/initialized"')) this.initialized = line;
      if (request) this.inFlight.set(JSON.stringify(request.id), request);
      if (this.link) this.link.socket.write(`${line}\n`);
      else this.queued.push(line);
    }
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
    for (const line of lines) {
      this.received += 1;
      const id = responseId(line);
      if (id === JSON.stringify(REPLAY_ID)) continue;
      if (id !== undefined) {
        if (this.inFlight.get(id)?.method === 'initialize') this.initializeAnswered = true;
        this.inFlight.delete(id);
      }
      out.push(line);
    }
    const upto = this.received;
    const receipt = () => {
      if (link === this.link && !link.socket.destroyed) link.socket.write(`{"upto":${upto}}\n`);
    };
    if (out.length === 0) {
      receipt();
      return;
    }
    // The receipt goes only once the lines are in the client's pipe.
    this.options.output.write(`${out.join('\n')}\n`, (error) => {
      if (!error) receipt();
    });
  }

  private lost(link: KernelLink): void {
    if (link !== this.link) return;
    this.link = undefined;
    if (this.clientGone) return;
    // Calls in flight end here (their replies are gone with the session); an unanswered initialize is sent again instead.
    const answers: string[] = [];
    for (const [key, request] of this.inFlight) {
      if (request.method === 'initialize') continue;
      answers.push(restartedReply(request));
      this.inFlight.delete(key);
    }
    if (answers.length > 0) this.options.output.write(`${answers.join('\n')}\n`);
    this.options.note('agent-kernel serve: the kernel went away; connecting again when it is back.');
    void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    const deadline = Date.now() + (this.options.reconnectMs ?? 60_000);
    while (!this.clientGone && Date.now() < deadline) {
      try {
        const link = await connectKernel(this.options.socketPath, { client: this.options.client, timeoutMs: 5000 });
        if (link.hello.dataDir !== this.options.dataDir) {
          link.socket.destroy();
          this.options.note(`agent-kernel serve: the kernel at ${this.options.socketPath} now serves ${link.hello.dataDir}, not ${this.options.dataDir}; giving up.`);
          break;
        }
        this.attach(link);
        this.resume(link);
        this.options.note(`agent-kernel serve: connected to the kernel again (PID ${link.hello.pid}).`);
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_POLL_MS));
      }
    }
    if (this.clientGone) return;
    this.options.note('agent-kernel serve: no kernel came back; the client must start this server again.');
    this.giveUp();
  }

  /** A new session: the client's handshake again, then what waited. */
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
    const answers = [...this.inFlight.values()].map(restartedReply);
    this.inFlight.clear();
    const end = () => this.finish(1);
    if (answers.length > 0) this.options.output.write(`${answers.join('\n')}\n`, end);
    else end();
  }

  private clientEnded(): void {
    if (this.clientGone) return;
    this.clientGone = true;
    const link = this.link;
    this.link = undefined;
    if (link) {
      link.socket.end();
      link.socket.once('close', () => this.finish(0));
      setTimeout(() => this.finish(0), 2000).unref();
    } else this.finish(0);
  }
}

/** Pure: the id and method of a JSON-RPC request line, or undefined (a notification, a receipt, garbage). */
function requestOf(line: string): Request | undefined {
  try {
    const message = JSON.parse(line) as { id?: unknown; method?: unknown };
    if ((typeof message.id === 'string' || typeof message.id === 'number') && typeof message.method === 'string') return { id: message.id, method: message.method };
  } catch {
    // Not JSON: the kernel answers it with a parse error.
  }
  return undefined;
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

/** Pure: the reply to a call the kernel took with it: a tool error the model reads, or a JSON-RPC error. */
export function restartedReply(request: Request): string {
  if (request.method === 'tools/call') {
    return JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: KERNEL_RESTARTED }], isError: true } });
  }
  return JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: -32603, message: KERNEL_RESTARTED } });
}
