import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { KernelRuntime } from './terminals/runtime.js';
import { deliveryId } from './terminals/terminals.js';

/**
 * Tell the terminals when a reply has been handed to the client: stdout is a pipe, written
 * synchronously on Linux, and an HTTP reply is in the socket once send resolves; a server
 * killed after that point cannot take the reply back. What a wait showed counts as seen for
 * good only then (see TtyManager.delivered).
 */
export function reportDeliveries(transport: Transport, runtime: KernelRuntime): void {
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    await send(message, options);
    if ('result' in message && message.id !== undefined) runtime.current?.delivered?.(deliveryId(transport.sessionId, message.id));
  };
}
