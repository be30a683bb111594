import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { renderOpen } from './render.js';
import { agentTerminals, guarded, toolInput, type ToolDeps } from './context.js';
import { openUntilInput } from './until-input.js';

const DESCRIPTION = `Open a new terminal (TTY) in your container and return its number. It takes the lowest free number from 0 to 19; at most 20 terminals are open at once.

Without a command it runs an interactive bash shell (with shell integration, so wait() knows when each command finishes and its exit code). With a command it runs that instead (for example "python3" or "htop"); the terminal ends when the command exits. For a program wait cannot judge (gdb, a custom REPL), set until to its prompt ({prompt: "(gdb)"}) or a regex ({regex: "..."}): every wait on this terminal then ends when it shows.

Terminals keep running between sessions. Open one for each long-running job (a server, a build, a REPL) so your main shell stays free. Close terminals you no longer need with close(tty). After open, call wait() to see its first screen before typing.`;

export const openOutputSchema = z.object({
  tty: z.number().describe('the new terminal number'),
  command: z.string().describe('what runs in it'),
  capacity: z.object({ used: z.number(), max: z.number() }),
});

export function registerOpenTool(server: McpServer, deps: ToolDeps): RegisteredTool {
  return server.registerTool(
    'open',
    {
      title: 'Open a terminal',
      description: DESCRIPTION,
      inputSchema: toolInput('open', {
        command: z
          .string({ error: 'command must be a string (a shell command line), or left out for bash' })
          .min(1, { error: 'command must not be empty: leave it out for bash' })
          .max(4096, { error: 'command must be at most 4096 characters: put a longer script in a file and run that' })
          .optional()
          .describe('the program to run instead of an interactive bash, as a shell command line (e.g. "python3", "tail -f log.txt")'),
        until: openUntilInput,
      }),
      outputSchema: openOutputSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ command, until }) =>
      guarded('open', deps, async () => {
        const terminals = await agentTerminals(deps);
        const result = await terminals.open({ ...(command === undefined ? {} : { command }), ...(until ? { until } : {}) });
        deps.logger.info({ tty: result.tty, command: result.command }, 'opened a terminal');
        return {
          content: [{ type: 'text', text: renderOpen(result) }],
          structuredContent: { tty: result.tty, command: result.command, capacity: result.capacity },
        };
      }),
  );
}
