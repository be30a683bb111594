import path from 'node:path';
import type { Instance } from '../../config/instance.js';
import type { Logger } from '../../log/logger.js';
import { sleep } from '../../util/sleep.js';
import { type Harness, MCP_SERVER_NAME, type McpServerStatus } from '../harnesses/harness.js';
import { packageFiles } from '../../config/package-files.js';

/** How long our MCP server may take to connect before the tick gives up. */
export const MCP_CONNECT_TIMEOUT_MS = 60_000;
/** A harness that does not answer the MCP status request within this gets the prompt anyway (checked at init instead). */
const MCP_STATUS_NO_ANSWER_MS = 10_000;

/** Status requests in flight, answered by the harness's `mcp-status` events. */
export class McpStatusRequests {
  private readonly waiters = new Map<string, (servers: McpServerStatus[]) => void>();

  /** The servers as the harness lists them; `[]` when it exits or the session ends first, undefined when it does not answer. */
  request(id: string, send: () => void, exited: Promise<unknown>): Promise<McpServerStatus[] | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        resolve(undefined);
      }, MCP_STATUS_NO_ANSWER_MS);
      this.waiters.set(id, (servers) => {
        clearTimeout(timer);
        resolve(servers);
      });
      void exited.then(() => {
        clearTimeout(timer);
        resolve([]);
      });
      send();
    });
  }

  answer(requestId: string, servers: McpServerStatus[]): void {
    this.waiters.get(requestId)?.(servers);
    this.waiters.delete(requestId);
  }

  /** The session ends: nobody waits for an answer any more. */
  cancelAll(): void {
    for (const waiter of this.waiters.values()) waiter([]);
    this.waiters.clear();
  }
}

export type McpWait = { kind: 'connected' } | { kind: 'no-answer' } | { kind: 'failed'; status: string } | { kind: 'gone' };

export interface McpWaitDeps {
  harness: Harness;
  requests: McpStatusRequests;
  writeLine(line: string): void;
  exited: Promise<unknown>;
  /** True once the session ended or the harness exited. */
  gone(): boolean;
  logger: Logger;
  signal?: AbortSignal | undefined;
}

/** Ask the harness for our server's status until it is connected, clearly is not, or the time is up. */
export async function waitForMcpServer(deps: McpWaitDeps): Promise<McpWait> {
  const encode = deps.harness.encodeMcpStatusRequest;
  if (!encode) return { kind: 'no-answer' };
  const deadline = Date.now() + MCP_CONNECT_TIMEOUT_MS;
  let request = 0;
  while (!deps.gone()) {
    const id = `mcp-status-${++request}`;
    const servers = await deps.requests.request(id, () => deps.writeLine(encode(id)), deps.exited);
    if (deps.gone()) return { kind: 'gone' };
    if (servers === undefined) {
      deps.logger.warn('the harness did not answer an MCP status request; checking the server at init instead');
      return { kind: 'no-answer' };
    }
    const status = serverStatus(servers);
    if (status === 'connected') {
      deps.logger.info('MCP server connected');
      return { kind: 'connected' };
    }
    if (status !== 'pending' || Date.now() > deadline) return { kind: 'failed', status };
    await sleep(250, deps.signal);
  }
  return { kind: 'gone' };
}

/** Pure: our server's status in a harness's list ("missing" when it is not there). */
export function serverStatus(servers: readonly McpServerStatus[]): string {
  return servers.find((s) => s.name === MCP_SERVER_NAME)?.status ?? 'missing';
}

/** The end detail of a session whose MCP server did not connect, naming where to look next. */
export function mcpFailureMessage(instance: Instance, status: string): string {
  return (
    `The MCP server "${MCP_SERVER_NAME}" did not connect (status: ${status}). ` +
    `Read its log (${path.join(instance.paths.logs, 'server.log')}), or run "node ${packageFiles().serverBin} serve ${instance.dataDir}" by hand to see why.`
  );
}
