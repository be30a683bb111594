import { randomUUID } from 'node:crypto';
import type net from 'node:net';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { LineSplitter } from '../lines.js';
import { MAX_LINE_BYTES, parseReceipt } from '../protocol.js';

/**
 * One MCP session on the kernel's socket (src/kernel/protocol.ts): JSON-RPC lines both ways,
 * and the client's receipts. A reply's send() resolves only once the client says the line
 * reached its own client (its stdout pipe, its HTTP socket); it rejects when the connection
 * ends first. So the delivery receipts (create-server.ts), which mark a wait's output seen after
 * send() resolves, keep their guarantee across this extra hop.
 */
export class SocketServerTransport implements Transport {
  readonly sessionId = randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly splitter = new LineSplitter(MAX_LINE_BYTES);
  private sent = 0;
  /** Replies written and not yet acknowledged, by line number. */
  private readonly unacknowledged = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private closed = false;

  constructor(private readonly socket: net.Socket) {}

  async start(): Promise<void> {
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk));
    // The client ended its side (the bridge's client went away): end ours too.
    this.socket.once('end', () => this.socket.end());
    this.socket.once('close', () => this.ended());
    this.socket.on('error', (error) => this.onerror?.(error));
  }

  private receive(chunk: Buffer): void {
    let lines: string[];
    try {
      lines = this.splitter.push(chunk);
    } catch (error) {
      this.onerror?.(error as Error);
      this.socket.destroy();
      return;
    }
    for (const line of lines) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch (error) {
        this.onerror?.(new Error(`not JSON: ${(error as Error).message}`));
        continue;
      }
      const receipt = parseReceipt(parsed);
      if (receipt) {
        this.acknowledge(receipt);
        continue;
      }
      const message = JSONRPCMessageSchema.safeParse(parsed);
      if (message.success) this.onmessage?.(message.data);
      else this.onerror?.(new Error(`not a JSON-RPC message: ${message.error.message}`));
    }
  }

  private acknowledge(receipt: { upto: number } | { ack: number }): void {
    if ('ack' in receipt) {
      this.unacknowledged.get(receipt.ack)?.resolve();
      this.unacknowledged.delete(receipt.ack);
      return;
    }
    for (const [line, waiter] of this.unacknowledged) {
      if (line > receipt.upto) continue;
      waiter.resolve();
      this.unacknowledged.delete(line);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the session has ended'));
    this.sent += 1;
    const line = this.sent;
    const isReply = 'id' in message && ('result' in message || 'error' in message);
    const written = new Promise<void>((resolve, reject) => {
      this.socket.write(`${JSON.stringify(message)}\n`, (error) => (error ? reject(error) : resolve()));
    });
    if (!isReply) return written;
    const received = new Promise<void>((resolve, reject) => this.unacknowledged.set(line, { resolve, reject }));
    received.catch(() => undefined); // rejected for whoever awaits it below, not as an unhandled rejection
    return written.then(() => received);
  }

  async close(): Promise<void> {
    this.socket.end();
    // A peer that does not end its side in time is cut off (a server closing waits for every socket).
    setTimeout(() => this.socket.destroy(), 1000).unref();
    this.ended();
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    const gone = new Error('the client went away before it received this reply');
    for (const waiter of this.unacknowledged.values()) waiter.reject(gone);
    this.unacknowledged.clear();
    this.onclose?.();
  }
}
