import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerCloseTool } from './close.js';
import type { ToolDeps } from './context.js';
import { registerLoginTool } from './login.js';
import { registerOpenTool } from './open.js';
import { registerTypeTool } from './type.js';
import { registerWaitTool } from './wait.js';

/** The five tools, in the order a session uses them. */
export const TOOL_NAMES = ['login', 'open', 'type', 'wait', 'close'] as const;

export function registerTools(server: McpServer, deps: ToolDeps): void {
  registerLoginTool(server, deps);
  registerOpenTool(server, deps);
  registerTypeTool(server, deps);
  registerWaitTool(server, deps);
  registerCloseTool(server, deps);
}
