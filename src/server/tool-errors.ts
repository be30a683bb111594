import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** A call that works, per tool: what the model should try next after a malformed one. */
const EXAMPLES: Readonly<Record<string, string>> = {
  login: 'login()',
  open: 'open() for bash, or open({command: "python3"})',
  type: 'type({tty: 0, expect: "bash", text: "ls"}), or type({tty: 0, expect: "python3", text: "C-c"}) for a key',
  wait: 'wait(), or wait({timeout: 10, until: ">>> "})',
  close: 'close({tty: 0})',
};

const VALIDATION = /^(?:MCP error -?\d+: )?Input validation error: Invalid arguments for tool (\S+): ([\s\S]*)$/;
const UNKNOWN_TOOL = /^(?:MCP error -?\d+: )?Tool (.+) (not found|disabled)$/;

/**
 * The SDK's wording for a call it refused before any tool ran, in the tools' own words:
 * what was wrong (each problem once, without the SDK's "at field" suffixes), that nothing
 * happened, and a call that works. Anything else passes unchanged.
 */
export function explainToolError(message: string, tools: readonly string[]): string {
  const unknown = UNKNOWN_TOOL.exec(message);
  if (unknown) {
    return `UNKNOWN_TOOL: There is no tool ${JSON.stringify(unknown[1])}. The tools are ${tools.join(', ')}: call login() first, then wait() to look and type() to act.`;
  }
  const invalid = VALIDATION.exec(message);
  if (!invalid) return message;
  const tool = invalid[1] ?? '';
  const problems = [...new Set((invalid[2] ?? '').split('\n').map((line) => line.replace(/ at [\w.[\]]+$/, '').trim()).filter(Boolean))];
  const example = EXAMPLES[tool];
  return `USAGE: ${tool}() was not run, nothing happened: ${problems.join('; ')}.${example ? ` Try ${example}.` : ''}`.replace(/\.\./g, '.');
}

/**
 * The SDK turns a refused call into a result through McpServer's createToolError, which
 * TypeScript calls private but is an ordinary method: wrap it so every refusal reads like
 * the tools' own errors. test/unit/server/fuzz.test.ts fails if an SDK update bypasses this.
 */
export function explainRefusedCalls(server: McpServer, tools: readonly string[]): void {
  const target = server as unknown as { createToolError: (message: string) => CallToolResult };
  const original = target.createToolError.bind(server);
  target.createToolError = (message: string) => original(explainToolError(message, tools));
}
