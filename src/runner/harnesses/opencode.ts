import type { Harness, HarnessEvent } from './harness.js';
import { MCP_SERVER_NAME } from './harness.js';
import { readMcpServerSpec, writeBeside } from './mcp-server-spec.js';

/**
 * opencode (https://opencode.ai), headless: `opencode run [--model provider/model] -- <prompt>`.
 *
 * How it gets our MCP server: the runner writes `opencode.json` beside the tick's
 * `mcp-config.json`, in opencode's format
 *   {"mcp": {"agent-kernel": {"type": "local", "command": [node, server.js, "serve", dataDir],
 *            "environment": {...}, "enabled": true}}, "tools": {"bash": false}}
 * and passes the same JSON in OPENCODE_CONFIG_CONTENT, which opencode documents as the
 * inline config that overrides the global and project configs (so the agent's own
 * opencode.json in the data repo cannot drop our server). OPENCODE_CONFIG points at the
 * file too, for versions that predate the inline variable.
 *
 * What is verified: nothing against a real opencode (it is not installed on the machine
 * this was written on). The config shape follows opencode's published docs and schema
 * (local servers take `command` as one array and `environment`, no `args`). Its output is
 * not parsed: a tick counts as successful when opencode exits with code 0 (exitCodeIsResult),
 * messages cannot be handed to it mid-tick (they wait for the next tick), and context use
 * is not tracked.
 */
export const opencodeHarness: Harness = {
  name: 'opencode',
  mcpConfigVia: 'env',
  stopSignal: 'SIGINT',
  exitCodeIsResult: true,
  invocation(setup) {
    const server = readMcpServerSpec(setup.mcpConfigFile);
    const config = {
      $schema: 'https://opencode.ai/config.json',
      mcp: {
        [MCP_SERVER_NAME]: { type: 'local', command: [server.command, ...server.args], environment: server.env, enabled: true },
      },
      // The terminals replace a shell tool, as with Claude Code.
      tools: { bash: false },
    };
    const file = writeBeside(setup.mcpConfigFile, 'opencode.json', config);
    const args = ['run'];
    if (setup.model) args.push('--model', setup.model);
    // After "--": the prompt is the agent's, and one starting with "-" would be read as options ("--share").
    args.push('--', setup.prompt);
    return {
      command: setup.config.command ?? 'opencode',
      args,
      env: { ...setup.env, OPENCODE_CONFIG: file, OPENCODE_CONFIG_CONTENT: JSON.stringify(config), OPENCODE_DISABLE_AUTOUPDATE: '1' },
      cwd: setup.cwd,
      interactiveStdin: false,
    };
  },
  parseLine(): HarnessEvent[] {
    return [];
  },
  classify() {
    // No result events: the exit code decides (see exitCodeIsResult).
    return undefined;
  },
};
