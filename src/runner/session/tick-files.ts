import path from 'node:path';
import { stateHome } from '../../config/paths.js';
import { configHome } from '../../config/registry.js';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { shellQuote } from '../../util/shell-quote.js';
import type { HookEventKind } from '../hooks/hook-channel.js';

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

/**
 * Pure: the settings that install the runner's hooks. PreCompact blocks every compaction
 * (the runner ends the tick instead); PostToolUse carries the wrap-up notice; Stop runs
 * the pre-stop checks.
 */
export function hookSettings(options: { nodePath: string; hookCli: string; socketPath: string }) {
  const command = (kind: HookEventKind) => [options.nodePath, options.hookCli, kind, options.socketPath].map((word) => shellQuote(word)).join(' ');
  return {
    hooks: {
      PreCompact: [{ hooks: [{ type: 'command', command: command('pre-compact'), timeout: 30 }] }],
      PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: command('post-tool-use'), timeout: 30 }] }],
      Stop: [{ hooks: [{ type: 'command', command: command('stop'), timeout: 600 }] }],
    },
  };
}

/** Write the hook settings of a session under the host-private `<state>/kernel/tick-NNN/attempt-N/`. */
export async function writeHookSettings(dir: string, settings: ReturnType<typeof hookSettings>): Promise<string> {
  const settingsFile = path.join(dir, 'settings.json');
  await writeFileAtomic(settingsFile, JSON.stringify(settings, null, 2) + '\n', 0o600);
  return settingsFile;
}

/** Write the private files a harness invocation names (its MCP config, its settings), mode 0600. */
export async function writeInvocationFiles(files: ReadonlyArray<{ path: string; content: string }>): Promise<void> {
  for (const file of files) await writeFileAtomic(file.path, file.content, 0o600);
}
