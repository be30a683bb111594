import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';

export interface Screen {
  /** The answer to a message the server must not see (see tool-errors.ts screenMessage); undefined: pass it on. */
  answer(message: JSONRPCMessage): JSONRPCMessage | undefined;
  /** Called once a message is handed to the client: the kernel's delivery receipt. */
  sent(message: JSONRPCMessage, sessionId: string | undefined): void;
}

/**
 * A transport as the MCP server sees it: messages it would answer badly are answered here
 * first, and each reply handed to the client is reported (Screen.sent). Everything else is the
 * wrapped transport's own: its session id, its handlers (a close handler set on it before the
 * server connects still runs), its protocol version.
 */
export class ScreenedTransport implements Transport {
  constructor(
    private readonly inner: Transport,
    private readonly screen: Screen,
  ) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  get onclose(): (() => void) | undefined {
    return this.inner.onclose;
  }

  set onclose(handler: (() => void) | undefined) {
    this.inner.onclose = handler;
  }

  get onerror(): ((error: Error) => void) | undefined {
    return this.inner.onerror;
  }

  set onerror(handler: ((error: Error) => void) | undefined) {
    this.inner.onerror = handler;
  }

  get onmessage(): Transport['onmessage'] {
    return this.inner.onmessage;
  }

  set onmessage(handler: Transport['onmessage']) {
    this.inner.onmessage = handler && (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => {
      const answer = this.screen.answer(message);
      if (answer === undefined) handler(message, extra);
      // A refusal that cannot be sent has no client left to read it.
      else this.send(answer).catch(() => undefined);
    });
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    await this.inner.send(message, options);
    this.screen.sent(message, this.inner.sessionId);
  }
}
