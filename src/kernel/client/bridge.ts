import type { Readable, Writable } from 'node:stream';
import { LastingSession } from './lasting-session.js';
import type { KernelLink } from './session-link.js';
import { LineSplitter } from '../lines.js';
import { type KernelClientKind, MAX_LINE_BYTES } from '../protocol.js';

/**
 * `agent-kernel serve` while the instance's kernel runs: the MCP client's stdio, passed line
 * for line to one lasting session on the kernel's socket (lasting-session.ts: it reconnects
 * when the kernel restarts). After writing the kernel's lines to stdout (a pipe: written when
 * the callback fires) it sends their receipt, so that what a wait showed counts as seen only
 * once its reply reached the client's pipe, as with a server of its own.
 */

export interface BridgeOptions {
  socketPath: string;
  client: KernelClientKind;
  /** The session already open (the caller connected to see that a kernel runs). */
  first: KernelLink;
  input: Readable;
  output: Writable;
  /** Longest time without a kernel before the bridge gives up (default 60 s). */
  reconnectMs?: number;
  /** The data directory the kernel must serve (checked on every reconnect). */
  dataDir: string;
  /** One line for the person or the log (stderr). */
  note: (line: string) => void;
}

/** Resolves with the exit code once the client has gone (0) or no kernel came back in time (1). */
export function bridgeStdio(options: BridgeOptions): Promise<number> {
  const { input, output, note } = options;
  return new Promise((resolve) => {
    let finished = false;
    const finish = (code: number) => {
      if (finished) return;
      finished = true;
      resolve(code);
    };
    /** The last write to the client's pipe (writes complete in order). */
    let written: Promise<void> = Promise.resolve();
    const session = new LastingSession({
      socketPath: options.socketPath,
      client: options.client,
      dataDir: options.dataDir,
      first: options.first,
      ...(options.reconnectMs === undefined ? {} : { reconnectMs: options.reconnectMs }),
      note,
      // The receipt goes only once the lines are in the client's pipe.
      deliver: (batch) => {
        written = new Promise<void>((wrote) =>
          output.write(`${batch.lines.join('\n')}\n`, (error) => {
            if (!error) batch.allDelivered();
            wrote();
          }),
        );
      },
      // Once the answers to the calls left open are in the pipe.
      gaveUp: () => void written.then(() => finish(1)),
    });
    const clientEnded = () => void session.close().then(() => finish(0));
    const fromClient = new LineSplitter(MAX_LINE_BYTES);
    input.on('data', (chunk: Buffer) => {
      let lines: string[];
      try {
        lines = fromClient.push(chunk);
      } catch (error) {
        note(`agent-kernel serve: the client sent ${(error as Error).message}; closing.`);
        clientEnded();
        return;
      }
      for (const line of lines) session.send(line);
    });
    input.once('end', clientEnded);
    input.once('error', clientEnded);
    output.once('error', clientEnded);
  });
}
