import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { InstancePaths } from '../../config/paths.js';
import { isCodedError, CodedError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import type { TerminalsRuntime } from '../terminals/runtime.js';
import type { Terminals } from '../terminals/terminals.js';
import { OBSERVING } from './render.js';
import { lostNotice, terminalsWentAway } from './terminals-lost.js';
import { errorResult, toolErrorResult } from './tool-result.js';

/** What one MCP session knows: whether its client has called login. */
export interface SessionState {
  loggedIn: boolean;
  /** The terminals this session's login opened the startup terminals on (a restart needs them again). */
  loggedInTo?: Terminals;
  /** The terminals this session last used: others mean they were started again since (see terminals-lost.ts). */
  using?: Terminals;
  /** Said before the next result: what happened to the terminals since this session last used them. */
  notice?: string;
}

/** Everything a tool needs, passed in explicitly. */
export interface ToolDeps {
  runtime: TerminalsRuntime;
  instance: { name: string; dataDir: string; paths: InstancePaths };
  logger: Logger;
  session: SessionState;
}

/** The terminals, for tools other than login: refused until this session has logged in. */
export async function loggedInTerminals(deps: ToolDeps): Promise<Terminals> {
  if (!deps.session.loggedIn) {
    throw new CodedError('NOT_LOGGED_IN', 'Not logged in: call login() first (once at the start of every session), then retry this call.');
  }
  const terminals = await deps.runtime.terminals();
  if (deps.session.using && deps.session.using !== terminals) deps.session.notice = lostNotice(deps.runtime, terminals);
  deps.session.using = terminals;
  return terminals;
}

/** The terminals, for the tools that act (open, type, close): refused to an observing session. */
export async function agentTerminals(deps: ToolDeps): Promise<Terminals> {
  const terminals = await loggedInTerminals(deps);
  if (!deps.runtime.agentRole.holds(deps.session)) throw new CodedError('OBSERVING', OBSERVING);
  return terminals;
}

/**
 * Run a tool body; whatever it throws becomes an isError result (expected failures with
 * their next step, bugs logged with a stack). The server never crashes on a tool call.
 */
export async function guarded(
  tool: string,
  deps: ToolDeps,
  body: () => Promise<CallToolResult>,
  signal?: AbortSignal,
): Promise<CallToolResult> {
  const began = Date.now();
  const ended = deps.runtime.agentRole.calling(deps.session);
  const attempt = async (again: boolean): Promise<CallToolResult> => {
    try {
      const result = await body();
      deps.logger.debug({ tool, ms: Date.now() - began }, `${tool} done`);
      return result;
    } catch (error) {
      if (signal?.aborted) {
        // The client cancelled or went away: nothing was marked seen, and nobody reads this.
        deps.logger.info({ tool, ms: Date.now() - began }, `${tool} cancelled by the client`);
        return errorResult(`${tool} was cancelled; nothing was marked as seen.`);
      }
      if (isCodedError(error, 'TMUX_FAILED') && deps.runtime.current) {
        await deps.runtime.invalidate(deps.runtime.current);
        // tmux (or its container) went away before the call did anything: the call that noticed starts the
        // terminals again and runs, and says what was lost (terminals-lost.ts), instead of failing.
        if (!again && error.details.gone !== undefined) {
          terminalsWentAway(deps.runtime, String(error.details.gone));
          return attempt(true);
        }
      }
      return toolErrorResult(tool, error, deps.logger);
    }
  };
  try {
    const result = await attempt(false);
    const notice = deps.session.notice;
    deps.session.notice = undefined;
    return notice ? { ...result, content: [{ type: 'text', text: notice }, ...result.content] } : result;
  } finally {
    ended();
  }
}

/** Shared input field: a terminal number. */
export const TTY_FIELD_MESSAGE = 'tty must be a whole number from 0 to 19 (a terminal number from open() or wait())';

/** The arguments each tool takes, by tool (filled as the tools register): errors that come before the schema name them. */
export const TOOL_ARGUMENTS = new Map<string, readonly string[]>();

/** How a tool names what it takes: "wait takes timeout, until" or "login() takes no arguments". */
export function describeArguments(tool: string, known: readonly string[]): string {
  return known.length === 0 ? `${tool}() takes no arguments` : `${tool} takes ${known.join(', ')}`;
}

/**
 * A tool's input schema: unknown keys are refused (a misspelt `timout` must not be
 * ignored) with a message that lists what the tool takes.
 */
export function toolInput<Shape extends z.ZodRawShape>(tool: string, shape: Shape) {
  const known = Object.keys(shape);
  TOOL_ARGUMENTS.set(tool, known);
  const takes = describeArguments(tool, known);
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `Unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}: ${takes}.` : undefined,
  });
}
