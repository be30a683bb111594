import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer, type McpServerDeps } from './create-server.js';

/**
 * MCP over this process's stdin and stdout (what Claude Code and Claude Desktop start).
 * Resolves `closed` when the client goes away: stdin ends or the transport closes.
 */
export async function serveStdio(deps: McpServerDeps): Promise<{ closed: Promise<void>; close: () => Promise<void> }> {
  const { server, cleanup } = createMcpServer(deps);
  const transport = new StdioServerTransport();
  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  transport.onclose = () => markClosed();
  // A client that vanished makes writes fail with EPIPE: that is a goodbye, not a crash.
  process.stdout.on('error', (error) => {
    deps.logger.info({ err: error }, 'stdout closed: the client went away');
    markClosed();
  });
  process.stdin.once('end', () => {
    deps.logger.info('stdin closed: the client went away');
    markClosed();
  });
  await server.connect(transport);
  deps.logger.info('serving MCP over stdio');
  return {
    closed,
    close: async () => {
      await cleanup().catch(() => undefined);
      markClosed();
    },
  };
}
