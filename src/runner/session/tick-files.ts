import path from 'node:path';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { shellQuote } from '../../util/shell-quote.js';
import type { HookEventKind } from '../hooks/hook-channel.js';

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

/** Write the hook settings of a session under the host-private `<state>/private/tick-NNN/attempt-N/`. */
export async function writeHookSettings(dir: string, settings: ReturnType<typeof hookSettings>): Promise<string> {
  const settingsFile = path.join(dir, 'settings.json');
  await writeFileAtomic(settingsFile, JSON.stringify(settings, null, 2) + '\n', 0o600);
  return settingsFile;
}

/** Write the private files a harness invocation names (its MCP config, its settings), mode 0600. */
export async function writeInvocationFiles(files: ReadonlyArray<{ path: string; content: string }>): Promise<void> {
  for (const file of files) await writeFileAtomic(file.path, file.content, 0o600);
}
