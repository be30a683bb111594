import path from 'node:path';
import { MCP_SERVER_NAME, type McpServerSpec } from './harness.js';

/** Pure: how a harness starts our server for this data dir, over stdio (it writes this in its own config format). */
export function mcpServerSpec(options: { nodePath: string; serverBin: string; dataDir: string; env?: Record<string, string> }): McpServerSpec {
  return { command: options.nodePath, args: [options.serverBin, 'serve', path.resolve(options.dataDir)], env: options.env ?? {} };
}

/**
 * Pure: our server in the `mcpServers` JSON format Claude Code reads (`--mcp-config`), which is
 * also what a custom harness gets as `{mcp_config}`. Every other harness writes the same
 * in-memory spec in its own format.
 */
export function mcpServersJson(server: McpServerSpec) {
  return { mcpServers: { [MCP_SERVER_NAME]: { type: 'stdio', command: server.command, args: server.args, env: server.env } } };
}

/** One private file of a harness invocation: JSON, pretty-printed. */
export function jsonFile(file: string, content: unknown): { path: string; content: string } {
  return { path: file, content: JSON.stringify(content, null, 2) + '\n' };
}

/**
 * `<work dir>/mcp-config.json`: our server for Claude Code (`--mcp-config`) and for a custom
 * harness (`{mcp_config}`), written with the invocation's other private files, never read back.
 */
export function mcpConfigFile(workDir: string, server: McpServerSpec): { path: string; content: string } {
  return jsonFile(path.join(workDir, 'mcp-config.json'), mcpServersJson(server));
}
