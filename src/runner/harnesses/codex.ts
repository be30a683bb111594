import { existsSync } from 'node:fs';
import path from 'node:path';
import { stringify as toToml } from 'smol-toml';
import { classifyHarnessError } from './classify.js';
import { type Harness, type HarnessEvent, MCP_SERVER_NAME, type McpServerSpec } from './harness.js';
import { layConfig, operatorHarnessConfig } from './harness-config.js';
import { privateHarnessEnv } from './harness-env.js';

/**
 * Codex CLI (`@openai/codex`), headless:
 *   codex exec --json --skip-git-repo-check --ephemeral --cd <private folder> [--model M] -- <prompt>
 *
 * Its configuration: `config.toml` in its private CODEX_HOME (`<home>/.codex`, where
 * `codex login` also keeps its credentials), rewritten for each session: defaults, the
 * operator's `runner.harness_config` over them (model, model_providers, openai_base_url), the
 * runner's over all: our server (its tools approved: nobody is there to approve them), and
 * every built-in tool off (shell and unified exec, apply_patch, view_image, web search, plans,
 * user questions, sub-agents, goals, apps, plugins, browser and computer use). Measured on
 * 0.171: the model is offered our five tools plus Codex's three generic MCP resource tools,
 * which read only from configured MCP servers (ours serves no resources). It runs in the
 * private harness folder, so no AGENTS.md or `.codex/` of the data repo is read.
 *
 * `features.unbounded_connection_retries` is off: 0.171 otherwise waits for a network forever,
 * printing "Reconnecting... waiting for network" about once a minute; with it off an
 * unreachable model fails the turn after a few retries (transient: the runner retries with backoff).
 *
 * Output: `--json` JSONL (thread.started, turn.started, item.*, error, turn.completed,
 * turn.failed). Whether our server connected is read from the tap.
 */

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

const DEFAULT_CONFIG: Json = {
  check_for_update_on_startup: false,
  analytics: { enabled: false },
  feedback: { enabled: false },
  history: { persistence: 'none' },
};

/** Built-in tools and services of Codex CLI 0.171 a tick turns off. */
const FEATURES_OFF = [
  'shell_tool',
  'unified_exec',
  'shell_snapshot',
  'view_image',
  'image_generation',
  'apps',
  'plugins',
  'remote_plugin',
  'browser_use',
  'computer_use',
  'goals',
  'hooks',
  'tool_suggest',
  'skill_search',
  'sleep_tool',
  'workspace_dependencies',
  'daemon_auto_start',
  'unbounded_connection_retries',
];

/** Pure: the config.toml of a tick's Codex CLI, as an object. */
export function codexConfig(server: McpServerSpec, operator: Json): Json {
  return layConfig(layConfig(DEFAULT_CONFIG, operator), {
    approval_policy: 'never',
    sandbox_mode: 'read-only',
    mcp_optional_startup_grace_ms: 30_000,
    web_search: 'disabled',
    features: Object.fromEntries(FEATURES_OFF.map((feature) => [feature, false])),
    agents: { enabled: false },
    tools: { experimental_request_user_input: { enabled: false }, update_plan: { enabled: false } },
    mcp_servers: {
      [MCP_SERVER_NAME]: { command: server.command, args: server.args, env: server.env, default_tools_approval_mode: "approve", enabled: true },
    },
  });
}

/** Pure: one line of `codex exec --json` → the events the runner cares about. */
export function parseCodexLine(line: string): HarnessEvent[] {
  let event: Json | undefined;
  try {
    event = asObject(JSON.parse(line));
  } catch {
    return [];
  }
  const item = asObject(event?.item);
  switch (event?.type) {
    case 'thread.started':
      return [{ type: 'init', ...(typeof event.thread_id === 'string' ? { sessionId: event.thread_id } : {}) }];
    case 'turn.started':
    case 'item.updated':
      return [{ type: 'assistant', mainThread: true, text: '' }];
    case 'item.started':
      return item?.type === 'mcp_tool_call' ? [{ type: 'tool-call' }] : [{ type: 'assistant', mainThread: true, text: '' }];
    case 'item.completed':
      switch (item?.type) {
        case 'agent_message':
          return [{ type: 'assistant', mainThread: true, text: typeof item.text === 'string' ? item.text : '' }];
        case 'mcp_tool_call':
        case 'command_execution':
        case 'web_search':
          return [{ type: 'tool-result' }];
        case 'error':
          return [{ type: 'notice', text: String(item.message ?? '') }];
        default:
          return [{ type: 'assistant', mainThread: true, text: '' }];
      }
    case 'error': {
      const text = String(event.message ?? '');
      return [{ type: 'notice', text, unreachable: /reconnecting|waiting for network|stream disconnected|connection failed|error sending request/i.test(text) }];
    }
    case 'turn.completed': {
      const usage = asObject(event.usage);
      const input = asNumber(usage?.input_tokens) ?? 0;
      const cached = asNumber(usage?.cached_input_tokens) ?? 0;
      return [
        {
          type: 'result',
          isError: false,
          subtype: 'success',
          text: '',
          usage: { input_tokens: Math.max(0, input - cached), cache_read_input_tokens: cached, output_tokens: asNumber(usage?.output_tokens) ?? 0 },
          numTurns: 1,
        },
      ];
    }
    case 'turn.failed':
      return [{ type: 'result', isError: true, subtype: 'error', text: String(asObject(event.error)?.message ?? 'the turn failed') }];
    default:
      return [];
  }
}

function codexHome(home: string): string {
  return path.join(home, '.codex');
}

export const codexHarness: Harness = {
  name: 'codex',
  mcpStatus: 'tap',
  stopSignal: 'SIGINT',
  invocation(setup) {
    const home = codexHome(setup.home);
    const args = ['exec', '--json', '--skip-git-repo-check', '--ephemeral', '--cd', setup.cwd];
    if (setup.model) args.push('--model', setup.model);
    // After "--": the prompt is the agent's, and one starting with "-" would be read as options.
    args.push('--', setup.prompt);
    return {
      command: setup.config.command ?? 'codex',
      args,
      env: { ...privateHarnessEnv(setup.env, setup), CODEX_HOME: home },
      cwd: setup.cwd,
      interactiveStdin: false,
      files: [{ path: path.join(home, 'config.toml'), content: toToml(codexConfig(setup.mcpServer, operatorHarnessConfig(setup.config))) }],
    };
  },
  parseLine: parseCodexLine,
  classify: classifyHarnessError,
  missingCredentials(setup) {
    // With OpenAI's own provider Codex sends a request without credentials and retries the refusal;
    // another provider (model_provider) names its key variable and reports it missing itself.
    const provider = operatorHarnessConfig(setup.config).model_provider;
    if (provider !== undefined && provider !== 'openai') return undefined;
    if (setup.env.CODEX_API_KEY || existsSync(path.join(codexHome(setup.home), 'auth.json'))) return undefined;
    return 'Codex CLI has no credentials: no CODEX_API_KEY in its environment and no login in its private home';
  },
  credentialsHelp({ secretsDir, home, name }) {
    return (
      `Give Codex CLI credentials: an OpenAI API key in ${path.join(secretsDir, 'CODEX_API_KEY')} (one file per variable; codex exec does not read OPENAI_API_KEY), ` +
      `or log in with \`CODEX_HOME=${codexHome(home)} codex login\` (\`--device-auth\` on a machine without a browser); ` +
      `with another provider, the variable its env_key names. Then \`kernel-runner resume ${name}\``
    );
  },
};
