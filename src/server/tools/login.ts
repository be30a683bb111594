import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { loadStartup } from '../../config/startup.js';
import { describeError, isCodedError } from '../../errors.js';
import { type LoginSummary, renderLogin, unseenOf } from './render.js';
import { loadBuildFailure, loadTick, tickRunning } from '../terminals/tick.js';
import { guarded, toolInput, type ToolDeps } from './context.js';

const DESCRIPTION = `Start your session with the computer: call login() first, once, at the start of every session (every tick), before any other tool.

It brings up your container and terminals if they are not up yet (this can take a while the first time), opens the terminals listed in system/startup.json (TTY 0 runs its startup command), and reports: the tick number, the terminals still running from before, terminals lost because the container restarted (with where their last scrollback was kept), how many terminals are in use out of 20, which terminals have output you have not seen yet, and the network policy (allowlist, none or open).

After login: call wait() to see the terminals, then type() to act. Calling login() again in the same session is harmless.

One session is the agent: the first to log in while no other agent session is connected (or that one has made no call for 5 minutes). Its waits mark output as seen (kept across server restarts) and it alone may open, type and close. Every other session observes: its wait() shows the same news without marking anything seen, so watching never hides output from the agent. login({ observe: true }) always observes; login({ observe: false }) takes the agent's role over.`;

const terminalSchema = z.object({ tty: z.number(), program: z.string(), alive: z.boolean(), unseenLines: z.number() });

export const loginOutputSchema = z.object({
  tick: z.number().describe('the tick number from the runner state (0 when the runner has not written one)'),
  inTick: z.boolean().optional().describe('false: no tick runs now (a person or client between ticks); tick is then the last one'),
  instance: z.string(),
  sandbox: z.string().describe('where the terminals run'),
  capacity: z.object({ used: z.number(), max: z.number() }),
  opened: z.array(z.object({ tty: z.number(), command: z.string() })).describe('terminals opened now from startup.json'),
  adopted: z.array(z.number()).describe('terminals still running from an earlier session'),
  lost: z
    .array(z.object({ tty: z.number(), command: z.string(), scrollbackPrev: z.string() }))
    .describe('terminals lost to a container restart, with their last scrollback file'),
  terminals: z.array(terminalSchema),
  unseen: z.array(z.object({ tty: z.number(), lines: z.number() })).describe('terminals with output not seen yet: call wait()'),
  persistent: z.boolean().describe('false when terminals end with this server (host backend without tmux)'),
  startupErrors: z.array(z.object({ tty: z.number(), error: z.string() })),
  alreadyLoggedIn: z.boolean(),
  role: z.enum(['agent', 'observer']).describe('agent: your waits mark output seen and you may act; observer: you watch, nothing you do changes what the agent has seen'),
  buildFailed: z
    .object({ step: z.string(), output: z.array(z.string()), error: z.string() })
    .optional()
    .describe('your changed system/container/Containerfile did not build at this tick\'s start: the failing step and its last output; the terminals run in the container as it was'),
  network: z
    .object({ policy: z.enum(['allowlist', 'none', 'open']), allowed: z.number().describe('destinations allowed (allowlist)') })
    .optional()
    .describe('the network policy the operator chose for this computer'),
});

export function registerLoginTool(server: McpServer, deps: ToolDeps): RegisteredTool {
  return server.registerTool(
    'login',
    {
      title: 'Log in (call first every session)',
      description: DESCRIPTION,
      inputSchema: toolInput('login', {
        observe: z
          .boolean({ error: 'observe must be true or false' })
          .optional()
          .describe('true: watch without marking anything seen or acting; false: take the agent role over from another session; omitted: be the agent unless another session is'),
      }),
      outputSchema: loginOutputSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    ({ observe }) =>
      guarded('login', deps, async () => {
        const terminals = await deps.runtime.terminals();
        const role = deps.runtime.agentRole;
        if (observe === true) role.release(deps.session);
        const agent = observe !== true && role.claim(deps.session, observe === false);
        const tick = await loadTick(deps.instance.paths.state, deps.logger);
        const inTick = await tickRunning(deps.instance.paths.state);
        terminals.setTick(tick, tick > 0 && !inTick);
        // Logged in already, to these same terminals: nothing to open again.
        const alreadyLoggedIn = deps.session.loggedIn && deps.session.loggedInTo === terminals;
        const opened: LoginSummary['opened'] = [];
        const startupErrors: LoginSummary['startupErrors'] = [];
        // Only the agent opens the startup terminals: an observer changes nothing.
        if (!alreadyLoggedIn && agent) {
          await deps.runtime.exclusive(async () => {
            let startup;
            try {
              startup = await loadStartup(deps.instance.dataDir);
            } catch (error) {
              startupErrors.push({ tty: -1, error: `system/startup.json: ${describeError(error)}` });
              return;
            }
            const open = new Set((await terminals.list()).map((t) => t.tty));
            for (const wanted of startup.terminals) {
              if (open.has(wanted.tty)) continue;
              try {
                const result = await terminals.open({
                  tty: wanted.tty,
                  ...(wanted.command === undefined ? {} : { command: wanted.command }),
                  ...(wanted.cwd === undefined ? {} : { cwd: wanted.cwd }),
                });
                opened.push({ tty: result.tty, command: result.command });
              } catch (error) {
                if (!isCodedError(error)) deps.logger.error({ err: error, tty: wanted.tty }, 'opening a startup terminal failed');
                startupErrors.push({ tty: wanted.tty, error: describeError(error) });
              }
            }
          });
        }
        deps.session.loggedIn = true;
        deps.session.loggedInTo = terminals;
        // login reports lost terminals itself.
        deps.session.using = terminals;
        deps.session.notice = undefined;
        const list = await terminals.list();
        const buildFailed = await loadBuildFailure(deps.instance.paths.state);
        const summary: LoginSummary = {
          tick,
          inTick,
          instance: deps.instance.name,
          sandbox: terminals.where,
          capacity: { used: list.length, max: terminals.maxTtys },
          opened,
          adopted: terminals.adoptReport.adopted,
          lost: terminals.adoptReport.lost,
          terminals: list.map((t) => ({ tty: t.tty, program: t.program, alive: t.alive, unseenLines: t.unseenLines })),
          unseen: unseenOf(list),
          persistent: terminals.adoptReport.persistent,
          startupErrors,
          alreadyLoggedIn,
          role: agent ? 'agent' : 'observer',
          network: terminals.network,
          ...(buildFailed ? { buildFailed } : {}),
        };
        deps.logger.info({ tick: summary.tick, role: summary.role, opened, lost: summary.lost.length, unseen: summary.unseen }, 'login');
        return { content: [{ type: 'text', text: renderLogin(summary) }], structuredContent: summary };
      }),
  );
}
