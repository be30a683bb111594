import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type CallToolResult, CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { invalidArguments, unknownTool } from './tool-errors.js';
import { errorResult } from './tools/tool-result.js';

type Extra = Parameters<Parameters<McpServer['server']['setRequestHandler']>[1]>[1];
type ToolHandler = (args: unknown, extra: Extra) => CallToolResult | Promise<CallToolResult>;

/**
 * Answer tools/call with the registered tools, through the SDK's public setRequestHandler:
 * arguments the tool's schema refuses, and unknown names, are refused in the tools' own
 * words (what was wrong, that nothing happened, a call that works) instead of the SDK's
 * schema text; a tool that declares an output schema must return structured content that
 * fits it. Whatever a tool throws becomes an isError result (the tools catch their own).
 */
export function answerToolCalls(server: McpServer, tools: ReadonlyMap<string, RegisteredTool>): void {
  const names = [...tools.keys()];
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const tool = tools.get(name);
    if (!tool?.enabled) return errorResult(unknownTool(name, names));
    try {
      let result: CallToolResult;
      if (tool.inputSchema) {
        const parsed = await (tool.inputSchema as z.ZodType).safeParseAsync(request.params.arguments ?? {});
        if (!parsed.success) return errorResult(invalidArguments(name, parsed.error.issues));
        result = await (tool.handler as ToolHandler)(parsed.data, extra);
      } else {
        result = await (tool.handler as (extra: Extra) => CallToolResult | Promise<CallToolResult>)(extra);
      }
      return result.isError ? result : checkOutput(name, tool, result);
    } catch (error) {
      return errorResult(error instanceof Error ? error.message : String(error));
    }
  });
}

/** A tool's result against its own output schema: a mismatch is the tool's bug, said as such. */
async function checkOutput(name: string, tool: RegisteredTool, result: CallToolResult): Promise<CallToolResult> {
  if (!tool.outputSchema) return result;
  if (!result.structuredContent) return errorResult(`Output validation error: Tool ${name} has an output schema but no structured content was provided`);
  const parsed = await (tool.outputSchema as z.ZodType).safeParseAsync(result.structuredContent);
  if (parsed.success) return result;
  return errorResult(`Output validation error: Invalid structured content for tool ${name}: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
}
