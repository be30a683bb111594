import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { personInputSince } from '../../observe/person-input.js';
import { MAX_WAIT_SECONDS } from '../../tty/api/types.js';
import { MAX_RESULT_TEXT_CHARS, renderWait } from './render.js';
import { waitUntilInput } from './until-input.js';
import { deliveryId } from '../terminals/terminals.js';
import { guarded, loggedInTerminals, toolInput, type ToolDeps } from './context.js';

export const DEFAULT_WAIT_SECONDS = 30;
/** How often a long wait tells a client that asked (a progress token) that it is still working. */
export const PROGRESS_INTERVAL_MS = 5000;

const DESCRIPTION = `Wait for your terminals and see what changed: the only way to observe output.

Returns as soon as what you started is done (a shell command finished, with its exit code and duration; a program exited; or a program drew and now waits for input: a prompt such as \`name? \`, a REPL, an editor, reported as "waiting for input"; a program that asks on one terminal ends the wait even while something you started elsewhere still runs), or when timeout seconds pass (default ${DEFAULT_WAIT_SECONDS}; a longer timeout is capped at ${MAX_WAIT_SECONDS}, under the 60 s clients allow a call, and the result says so: call wait again to wait longer). Then it shows, for every terminal with something new, the new lines since you last looked: up to 20 lines in full, longer output as head and tail with a line saying how many lines were left out and which file holds them all (read it with sed, tail or less in a terminal). A full-screen program (vim, less, htop), or one that redraws its screen in place (top), shows its current screen instead. Lines starting with "network:" report connections the network policy refused. Everything shown counts as seen, which lets type() act again. Terminals whose program ended are reported with their exit code, then closed.

For a program wait cannot judge (gdb, a custom REPL, a slow tool that pauses mid-output), pass until: {tty, prompt: "(gdb)"} or {tty, regex: "..."}: the wait then ends when that terminal shows the prompt at the cursor, or new output matching the regex ("matched"), or its program ends; open() takes the same until for every wait on that terminal.

A session that observes (see login) gets the same report of what the agent has not seen yet, and marks nothing seen.

Call wait() after login and after every type(). Tip: call type and wait as parallel tool calls in one turn. If a command is still running when wait returns, call wait again. One result carries at most ${MAX_RESULT_TEXT_CHARS} characters of terminal text.`;

const diffSchema = z.object({
  tty: z.number(),
  program: z.string().describe('the foreground program'),
  alive: z.boolean(),
  exitCode: z.number().optional().describe('exit code of the command that finished, or of the program that ended'),
  durationMs: z.number().optional().describe('how long that command ran'),
  fullScreen: z.boolean().describe('true when diff is the whole screen: a full-screen program, or one that redrew its screen in place (top)'),
  diff: z.string().describe('the new lines since you last looked (or the screen)'),
  totalLines: z.number().describe('how many new lines there were'),
  elidedLines: z.number().describe('how many of them diff leaves out (its note names the files and line ranges that hold them)'),
  cutChars: z.number().describe('characters left out by the result size cap (also in files.scrollback)'),
  files: z.object({ scrollback: z.string(), screen: z.string() }).describe('where the full text is, as paths that open inside the container'),
  archivedTo: z.string().optional().describe('set when the terminal ended and was closed'),
});

export const waitOutputSchema = z.object({
  reason: z.enum(['command-finished', 'exited', 'settled', 'timeout', 'idle', 'input', 'matched']),
  input: z
    .object({ tty: z.number(), prompt: z.string() })
    .optional()
    .describe('with reason input: the terminal whose program waits for input, and its prompt (empty for a full-screen program)'),
  matched: z.object({ tty: z.number(), text: z.string() }).optional().describe('with reason matched: the terminal whose output matched until, and the text that matched'),
  elapsedMs: z.number(),
  changed: z.array(diffSchema).describe('terminals with something new'),
  open: z.array(z.object({ tty: z.number(), program: z.string(), alive: z.boolean() })).describe('every open terminal'),
  notices: z.array(z.string()).optional().describe('what happened outside the terminals, e.g. network: refused <host>:<port>'),
  timeoutCapped: z
    .object({ asked: z.number(), waited: z.number() })
    .optional()
    .describe(`set when the timeout asked for was more than one wait lasts (${MAX_WAIT_SECONDS} s): the seconds asked and the seconds waited at most`),
});

/** Refused connections and the like: after the terminals, one line each. */
function withNotices<T extends { text: string; structured: object }>(rendered: T, notices: string[]): T {
  if (notices.length === 0) return rendered;
  return { ...rendered, text: `${rendered.text}\n${notices.join('\n')}`, structured: { ...rendered.structured, notices } };
}

export function registerWaitTool(server: McpServer, deps: ToolDeps): RegisteredTool {
  return server.registerTool(
    'wait',
    {
      title: 'Wait and see what changed',
      description: DESCRIPTION,
      inputSchema: toolInput('wait', {
        timeout: z
          .number({ error: `timeout must be a number of seconds, such as 10 (at most ${MAX_WAIT_SECONDS} are waited)` })
          .min(0, { error: `timeout must be a number of seconds from 0 up (at most ${MAX_WAIT_SECONDS} are waited)` })
          .optional()
          .describe(`the most seconds to wait (default ${DEFAULT_WAIT_SECONDS}; more than ${MAX_WAIT_SECONDS} is capped at ${MAX_WAIT_SECONDS}); it returns earlier when the work is done`),
        until: waitUntilInput,
      }),
      outputSchema: waitOutputSchema,
      // Marks output as seen, but changes nothing in the container.
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ timeout, until }, extra) =>
      guarded('wait', deps, async () => {
        const terminals = await loggedInTerminals(deps);
        const asked = timeout ?? DEFAULT_WAIT_SECONDS;
        // Capped, not refused: an error would cost the agent a turn for the same wait.
        const seconds = Math.min(asked, MAX_WAIT_SECONDS);
        const progressToken = extra._meta?.progressToken;
        const stopProgress = progressToken === undefined ? () => {} : reportProgress(seconds, (progress, message) =>
          extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: seconds, message } }));
        // An observing session sees the same news and takes nothing: no mark, no notice, no person-input line.
        const observing = !deps.runtime.agentRole.holds(deps.session);
        const result = await terminals
          .wait({ timeoutMs: Math.round(seconds * 1000), signal: extra.signal, ...(observing ? { observe: true } : { deliveryId: deliveryId(extra.sessionId, extra.requestId) }), ...(until ? { until } : {}) })
          .finally(stopProgress);
        const rendered = withNotices(renderWait(result), observing ? [] : (terminals.takeNotices?.() ?? []));
        if (asked > MAX_WAIT_SECONDS) {
          rendered.structured.timeoutCapped = { asked, waited: MAX_WAIT_SECONDS };
          if (result.reason === 'timeout') rendered.text += `\n${cappedNote(asked)}`;
        }
        const person = observing ? undefined : await personInputSince(deps.instance.paths.events).catch(() => undefined);
        if (person) rendered.text = `${person}\n${rendered.text}`;
        if (observing) rendered.text = `Observing: this is what the agent has not seen yet; nothing was marked seen.\n${rendered.text}`;
        deps.logger.debug({ reason: result.reason, ms: result.elapsedMs, changed: result.changed.map((c) => c.tty) }, 'waited');
        return { content: [{ type: 'text', text: rendered.text }], structuredContent: rendered.structured };
      }, extra.signal),
  );
}

/** Said when a capped wait timed out: what was asked, what one wait does, what to do. */
export function cappedNote(asked: number): string {
  return `(timeout ${asked} s was capped at ${MAX_WAIT_SECONDS} s: one wait stays under the 60 s clients allow a call; call wait() again to wait longer)`;
}

/**
 * A progress notification every PROGRESS_INTERVAL_MS while a wait runs: clients that reset
 * their request timeout on progress (the TypeScript SDK's resetTimeoutOnProgress) then never
 * time out a long wait. Returns the function that stops it.
 */
function reportProgress(totalSeconds: number, send: (progress: number, message: string) => Promise<void>): () => void {
  const began = Date.now();
  const timer = setInterval(() => {
    const seconds = Math.round((Date.now() - began) / 1000);
    send(Math.min(seconds, totalSeconds), `waiting: ${seconds} s of at most ${totalSeconds} s`).catch(() => {});
  }, PROGRESS_INTERVAL_MS);
  return () => clearInterval(timer);
}
