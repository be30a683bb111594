import type { Harness, HarnessEvent } from './harness.js';
import { MCP_SERVER_NAME } from './harness.js';
import { readMcpServerSpec, writeBeside } from './mcp-server-spec.js';

/**
 * Gemini CLI (`@google/gemini-cli`), headless: `gemini --prompt=<prompt> [--model M]
 * --allowed-mcp-server-names agent-kernel`.
 *
 * How it gets our MCP server: the runner writes a `gemini-settings.json` beside the tick's
 * `mcp-config.json`,
 *   {"mcpServers": {"agent-kernel": {"command": node, "args": [server.js, "serve", dataDir],
 *                                    "env": {...}, "trust": true}}}
 * and points GEMINI_CLI_SYSTEM_SETTINGS_PATH at it: Gemini CLI documents the system
 * settings file as the layer that overrides user and project settings, and merges
 * `mcpServers` objects, so the user's ~/.gemini is left alone. `trust: true` lets the
 * headless run call our tools without a confirmation prompt (there is nobody to answer
 * one); `--allowed-mcp-server-names` keeps any other configured server out.
 *
 * What is verified: nothing against a real Gemini CLI (it is not installed on the machine
 * this was written on); the flags and the settings shape follow its published docs. Its
 * output is not parsed: a tick counts as successful when it exits with code 0
 * (exitCodeIsResult), messages cannot be handed to it mid-tick (they wait for the next
 * tick), and context use is not tracked.
 */
export const geminiCliHarness: Harness = {
  name: 'gemini-cli',
  mcpConfigVia: 'file',
  stopSignal: 'SIGINT',
  exitCodeIsResult: true,
  invocation(setup) {
    const server = readMcpServerSpec(setup.mcpConfigFile);
    const settings = {
      mcpServers: { [MCP_SERVER_NAME]: { command: server.command, args: server.args, env: server.env, trust: true } },
    };
    const file = writeBeside(setup.mcpConfigFile, 'gemini-settings.json', settings);
    // One word: the prompt is the agent's, and yargs reads a separate "--yolo" as the flag, not the prompt.
    const args = [`--prompt=${setup.prompt}`, '--allowed-mcp-server-names', MCP_SERVER_NAME];
    if (setup.model) args.push('--model', setup.model);
    return {
      command: setup.config.command ?? 'gemini',
      args,
      env: { ...setup.env, GEMINI_CLI_SYSTEM_SETTINGS_PATH: file },
      cwd: setup.cwd,
      interactiveStdin: false,
    };
  },
  parseLine(): HarnessEvent[] {
    return [];
  },
  classify() {
    return undefined;
  },
};
