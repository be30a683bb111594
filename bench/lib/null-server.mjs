/**
 * The floor of any MCP server that a client starts as a process (as Claude Code starts ours each
 * tick): Node built-ins only, it answers initialize and every tool call at once, with a login that
 * says nothing. The kernel bench times it beside `serve` bridged to a running kernel.
 *
 *   node bench/lib/null-server.mjs serve <anything>
 */
import { createInterface } from 'node:readline';

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, method, params } = JSON.parse(line);
  if (id === undefined) return;
  if (method === 'initialize') {
    send({ id, result: { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'null-server', version: '0' } } });
  } else if (method === 'tools/call') {
    send({ id, result: { content: [{ type: 'text', text: 'logged in' }], structuredContent: { role: 'agent' } } });
  } else {
    send({ id, error: { code: -32601, message: `no ${method} here` } });
  }
});
