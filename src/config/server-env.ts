import { stateHome } from './paths.js';
import { configHome } from './registry.js';

/** How the runner reaches the engine: passed to the server explicitly, as some harnesses give MCP servers only a few variables of their own. */
const ENGINE_VARIABLES = ['DOCKER_HOST', 'DOCKER_CONTEXT', 'DOCKER_CERT_PATH', 'DOCKER_TLS_VERIFY', 'AGENT_KERNEL_LOG_LEVEL'] as const;

/**
 * The server finds the same instance registry and host-private state as the runner, even
 * when the harness runs it with another HOME or XDG dirs (both are pinned, never inherited),
 * the same engine (Codex CLI gives an MCP server only PATH, HOME and a few more), and tells the instance's
 * kernel that it is a tick's (the tick's agent takes the agent's role).
 */
export function serverEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const engine: Record<string, string> = {};
  for (const name of ENGINE_VARIABLES) if (env[name]) engine[name] = env[name];
  return { ...engine, AGENT_KERNEL_CONFIG_DIR: configHome(env), AGENT_KERNEL_STATE_DIR: stateHome(env), AGENT_KERNEL_CLIENT: 'tick' };
}
