import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerCloseTool } from './close.js';
import type { ToolDeps } from './context.js';
import { registerLoginTool } from './login.js';
import { registerOpenTool } from './open.js';
import { registerTypeTool } from './type.js';
import { registerWaitTool } from './wait.js';

/** The five tools, in the order a session uses them. */
export const TOOL_NAMES = ['login', 'open', 'type', 'wait', 'close'] as const;

/** The five tools, registered on `server`, by name. */
export function registerTools(server: McpServer, deps: ToolDeps): ReadonlyMap<string, RegisteredTool> {
  return new Map([
    ['login', registerLoginTool(server, deps)],
    ['open', registerOpenTool(server, deps)],
    ['type', registerTypeTool(server, deps)],
    ['wait', registerWaitTool(server, deps)],
    ['close', registerCloseTool(server, deps)],
  ]);
}
