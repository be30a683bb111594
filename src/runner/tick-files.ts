import path from 'node:path';
import { stateHome } from '../config/paths.js';
import { configHome } from '../config/registry.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import type { HookEventKind } from './hook-channel.js';
import { MCP_SERVER_NAME } from './harnesses/harness.js';

/** Quote one word for the POSIX shell Claude Code runs hook commands with. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The server finds the same instance registry and host-private state as the runner, even
 * when the harness runs it with another HOME or XDG dirs (both are pinned, never inherited),
 * and tells the instance's kernel that it is a tick's (the tick's agent takes the agent's role).
 */
export function serverEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return { AGENT_KERNEL_CONFIG_DIR: configHome(env), AGENT_KERNEL_STATE_DIR: stateHome(env), AGENT_KERNEL_CLIENT: 'tick' };
}

/** Pure: the MCP config that makes the harness start our server for this data dir, over stdio. */
export function mcpConfig(options: { nodePath: string; serverBin: string; dataDir: string; env?: Record<string, string> }) {
  return {
    mcpServers: {
      [MCP_SERVER_NAME]: {
        type: 'stdio',
        command: options.nodePath,
        args: [options.serverBin, 'serve', path.resolve(options.dataDir)],
        env: options.env ?? {},
      },
    },
  };
}

/**
 * Pure: the settings that install the runner's hooks. PreCompact blocks every compaction
 * (the runner ends the tick instead); PostToolUse carries the wrap-up notice; Stop runs
 * the pre-stop checks.
 */
export function hookSettings(options: { nodePath: string; hookCli: string; socketPath: string }) {
  const command = (kind: HookEventKind) => [options.nodePath, options.hookCli, kind, options.socketPath].map(shellQuote).join(' ');
  return {
    hooks: {
      PreCompact: [{ hooks: [{ type: 'command', command: command('pre-compact'), timeout: 30 }] }],
      PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: command('post-tool-use'), timeout: 30 }] }],
      Stop: [{ hooks: [{ type: 'command', command: command('stop'), timeout: 600 }] }],
    },
  };
}

/** Write the two generated files of a tick under the host-private `<state>/kernel/tick-NNN/`. */
export async function writeTickFiles(
  dir: string,
  mcp: ReturnType<typeof mcpConfig>,
  settings: ReturnType<typeof hookSettings>,
): Promise<{ mcpConfigFile: string; settingsFile: string }> {
  const mcpConfigFile = path.join(dir, 'mcp-config.json');
  const settingsFile = path.join(dir, 'settings.json');
  await writeFileAtomic(mcpConfigFile, JSON.stringify(mcp, null, 2) + '\n', 0o600);
  await writeFileAtomic(settingsFile, JSON.stringify(settings, null, 2) + '\n', 0o600);
  return { mcpConfigFile, settingsFile };
}
