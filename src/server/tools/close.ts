import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { renderClose } from './render.js';
import { agentTerminals, guarded, toolInput, type ToolDeps, TTY_FIELD_MESSAGE } from './context.js';

const DESCRIPTION = `Close a terminal: end everything running in TTY tty (every process it started, also those that left its session) and archive its scrollback to system/logs/sessions/. Its number becomes free for open().

Close terminals you no longer need before your session ends; terminals whose program already ended are closed by wait() on its own. Make sure you saved what you need first: a closed terminal cannot be reopened.`;

export const closeOutputSchema = z.object({
  tty: z.number(),
  archivedTo: z.string().describe('the archived scrollback file'),
  ended: z.array(z.object({ pid: z.number(), name: z.string() })).optional().describe('the processes close ended'),
  capacity: z.object({ used: z.number(), max: z.number() }),
});

export function registerCloseTool(server: McpServer, deps: ToolDeps): RegisteredTool {
  return server.registerTool(
    'close',
    {
      title: 'Close a terminal',
      description: DESCRIPTION,
      inputSchema: toolInput('close', {
        tty: z
          .int({ error: TTY_FIELD_MESSAGE })
          .min(0, { error: TTY_FIELD_MESSAGE })
          .max(19, { error: TTY_FIELD_MESSAGE })
          .describe('the terminal number to close (0-19)'),
      }),
      outputSchema: closeOutputSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    ({ tty }) =>
      guarded('close', deps, async () => {
        const terminals = await agentTerminals(deps);
        const result = await terminals.close(tty);
        deps.logger.info({ tty, archivedTo: result.archivedTo }, 'closed a terminal');
        return {
          content: [{ type: 'text', text: renderClose(result) }],
          structuredContent: { tty: result.tty, archivedTo: result.archivedTo, ...(result.ended ? { ended: result.ended } : {}), capacity: result.capacity },
        };
      }),
  );
}
