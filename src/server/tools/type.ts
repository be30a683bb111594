import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { renderType } from './render.js';
import { agentTerminals, guarded, toolInput, type ToolDeps, TTY_FIELD_MESSAGE } from './context.js';

const DESCRIPTION = `Type into a terminal: send text or one key to TTY tty.

Observe before you act: type() is refused while this terminal has output you have not seen, or another terminal has news you have not seen that matters (a command finished, a program ended, or a program now asks for input); output merely streaming on another terminal does not refuse. Call wait() first. C-c and C-z always go through to their terminal, so you can stop a runaway loop. Say in expect which program you believe is in the foreground of that terminal ("bash", "python3", "vim", "less"...; in a pipeline any of its programs, such as "less" in seq 1000000 | less; for C-c and C-z the shell that owns the job also works): if something else is running, nothing is sent and the error tells you what is there.

text is sent literally and followed by Enter (set enter to false to leave the line unfinished). Multi-line text is pasted as one paste. A key name alone is sent as that key, without Enter: C-c (interrupt), C-d (end of input), C-z, Tab, Enter, Escape, Up, Down, Left, Right, Home, End, PageUp, PageDown, BSpace, F1-F12.

type() does not wait for the result. Tip: call type and wait as parallel tool calls in one turn, type first, so you see the result in the same turn.`;

export const typeOutputSchema = z.object({
  tty: z.number(),
  sent: z.enum(['text', 'paste', 'key']).describe('how it was sent'),
  key: z.string().optional().describe('the key sent, such as C-c'),
  bytes: z.number(),
  enter: z.boolean().describe('whether Enter followed the text'),
});

export function registerTypeTool(server: McpServer, deps: ToolDeps): RegisteredTool {
  return server.registerTool(
    'type',
    {
      title: 'Type into a terminal',
      description: DESCRIPTION,
      inputSchema: toolInput('type', {
        tty: z
          .int({ error: TTY_FIELD_MESSAGE })
          .min(0, { error: TTY_FIELD_MESSAGE })
          .max(19, { error: TTY_FIELD_MESSAGE })
          .describe('the terminal number (0-19)'),
        expect: z
          .string({ error: 'expect must be a string naming the program you believe is in the foreground, such as "bash"' })
          .min(1, { error: 'expect must name the program you believe is in the foreground, such as "bash"' })
          .max(256, { error: 'expect must be a program name, at most 256 characters' })
          .describe('the program you believe is in the foreground of that terminal, such as "bash", "python3" or "vim"'),
        // No length here: the terminal layer refuses text over the configured cap (tty.max_text_bytes) naming it.
        text: z
          .string({ error: 'text must be a string: the text to type, or one key name such as "C-c"' })
          .describe('literal text to type (at most tty.max_text_bytes, 16 KiB unless configured otherwise), or one key name (C-c, C-d, Tab, Enter, Escape, Up, Down, F1...)'),
        enter: z
          .boolean({ error: 'enter must be true or false' })
          .optional()
          .describe('press Enter after literal text (default true); never added after a key name'),
      }),
      outputSchema: typeOutputSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    ({ tty, expect, text, enter }) =>
      guarded('type', deps, async () => {
        const terminals = await agentTerminals(deps);
        const result = await terminals.type({ tty, expect, text, ...(enter === undefined ? {} : { enter }) });
        deps.logger.debug({ tty, sent: result.sent, bytes: result.bytes }, 'typed');
        return {
          content: [{ type: 'text', text: renderType(result) }],
          structuredContent: { tty: result.tty, sent: result.sent, ...(result.key ? { key: result.key } : {}), bytes: result.bytes, enter: result.enter },
        };
      }),
  );
}
