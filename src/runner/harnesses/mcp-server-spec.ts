import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KernelError } from '../../errors.js';
import { MCP_SERVER_NAME } from './harness.js';

/**
 * Our MCP server as the runner wrote it for Claude Code (`mcp-config.json`:
 * `{"mcpServers": {"agent-kernel": {"command", "args", "env"}}}`), read back so that other
 * harnesses can be given the same server in their own config format.
 */
export interface McpServerSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export function readMcpServerSpec(mcpConfigFile: string): McpServerSpec {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(mcpConfigFile, 'utf8'));
  } catch (error) {
    throw new KernelError('INTERNAL', `Cannot read the generated MCP config ${mcpConfigFile}: ${(error as Error).message}`, { cause: error });
  }
  const server = (parsed as { mcpServers?: Record<string, Partial<McpServerSpec>> }).mcpServers?.[MCP_SERVER_NAME];
  if (!server || typeof server.command !== 'string') {
    throw new KernelError('INTERNAL', `The generated MCP config ${mcpConfigFile} has no "${MCP_SERVER_NAME}" server.`);
  }
  return { command: server.command, args: server.args ?? [], env: server.env ?? {} };
}

/** Write a harness-specific config file beside the generated MCP config (private: 0600). */
export function writeBeside(mcpConfigFile: string, name: string, content: unknown): string {
  const file = path.join(path.dirname(mcpConfigFile), name);
  writeFileSync(file, JSON.stringify(content, null, 2) + '\n', { mode: 0o600 });
  return file;
}
