import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { InstancePaths } from '../config/paths.js';
import type { Logger } from '../log/logger.js';
import type { TerminalsRuntime } from './terminals/runtime.js';
import type { SessionState } from './tools/context.js';
import { ScreenedTransport } from './screened-transport.js';
import { answerToolCalls } from './tool-calls.js';
import { screenMessage } from './tool-errors.js';
import { deliveryId } from './terminals/terminals.js';
import { TOOL_NAMES, registerTools } from './tools/index.js';
import { SERVER_VERSION } from './version.js';

export interface McpServerDeps {
  /** Shared by every session of this process: the terminals are per instance. */
  runtime: TerminalsRuntime;
  instance: { name: string; dataDir: string; paths: InstancePaths };
  logger: Logger;
  /** `tick`: a tick's harness, through the kernel (it takes the agent's role at login); default a person. */
  client?: 'tick' | 'person';
}

const INSTRUCTIONS = `agent-kernel gives you numbered terminals (TTYs 0-19) in a persistent container. Call login() first. Then observe before you act: wait() shows what changed on every terminal, type(tty, expect, text) types into one and is refused while any terminal has output you have not seen. Call type and wait as parallel tool calls. Terminals keep running between sessions; close the ones you no longer need.`;

/**
 * The kernel's MCP server: every transport it connects to is screened (tool-errors.ts) and
 * reports its deliveries: stdout is a pipe, written synchronously on Linux, and an HTTP reply
 * is in the socket once send resolves; a server killed after that point cannot take the reply
 * back. What a wait showed counts as seen for good only then (see TtyManager.delivered).
 */
class KernelMcpServer extends McpServer {
  constructor(private readonly runtime: TerminalsRuntime) {
    super({ name: 'agent-kernel', title: 'agent-kernel terminals', version: SERVER_VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  }

  override connect(transport: Transport): Promise<void> {
    return super.connect(
      new ScreenedTransport(transport, {
        answer: (message) => screenMessage(message, TOOL_NAMES),
        sent: (message, sessionId) => {
          if ('result' in message && message.id !== undefined) this.runtime.current?.delivered?.(deliveryId(sessionId, message.id));
        },
      }),
    );
  }
}

/**
 * One MCP server for one client session. Over stdio there is one; over HTTP one per
 * session, all sharing the instance's runtime. `cleanup` closes this session only.
 */
export function createMcpServer(deps: McpServerDeps): { server: McpServer; cleanup: () => Promise<void> } {
  const server = new KernelMcpServer(deps.runtime);
  const session: SessionState = { loggedIn: false };
  if (deps.client === 'tick') deps.runtime.agentRole.preferTick(session);
  answerToolCalls(server, registerTools(server, { ...deps, session }));
  // The agent's role is free again when its session ends (stdio closed, HTTP session gone).
  server.server.onclose = () => deps.runtime.agentRole.release(session);
  return {
    server,
    cleanup: async () => {
      deps.runtime.agentRole.release(session);
      await server.close();
    },
  };
}
