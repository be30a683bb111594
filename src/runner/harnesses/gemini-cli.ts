import path from 'node:path';
import { classifyHarnessError, type ErrorSignals, stderrCause } from './classify.js';
import { type Harness, type HarnessEvent, AGENT_KERNEL_TOOLS, MCP_SERVER_NAME } from './harness.js';
import { layConfig, operatorHarnessConfig } from './harness-config.js';
import { privateHarnessEnv } from './harness-env.js';
import { jsonFile } from './mcp-server-spec.js';

/**
 * Gemini CLI (`@google/gemini-cli`), headless:
 *   gemini --output-format stream-json --skip-trust [--model M] --prompt=<prompt>
 *
 * Its settings: the user settings file of its private home (`<home>/.gemini/settings.json`),
 * rewritten for each session: the operator's `runner.harness_config` (auth type, model) with
 * the runner's over it. Not the system settings file: Gemini CLI 0.61 skips one whose folders
 * are not all root-owned and closed to others. It runs in the private harness folder, so the
 * data repo's `.gemini/` settings, `GEMINI.md` and `.env` are never read; `--skip-trust` trusts
 * that folder (folder trust is on by default and would refuse to run headless).
 *
 * Only our tools: `tools.core` lists them by the names Gemini gives MCP tools
 * (`mcp_agent-kernel_<tool>`); every built-in tool (files, shell, web search, agents) is left
 * unregistered (measured: the model is offered exactly our five), and `mcp.allowed` keeps
 * other servers out unless the operator configured them. `trust: true` lets it call
 * them with nobody to confirm. `general.maxAttempts` bounds its own retries (10 by default,
 * five minutes for an unreachable model); the runner retries with backoff after that.
 *
 * Output: `--output-format stream-json` (init, message, tool_use, tool_result, error, result).
 * Whether our server connected is read from the tap.
 */

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** The names Gemini CLI gives our tools. */
export const GEMINI_TOOL_NAMES = AGENT_KERNEL_TOOLS.map((tool) => `mcp_${MCP_SERVER_NAME}_${tool}`);

/** What a tick's Gemini CLI gets unless the operator says otherwise. */
const DEFAULT_SETTINGS = {
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 3, checkpointing: { enabled: false } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  skills: { enabled: false },
  hooksConfig: { enabled: false },
};

/**
 * Pure: the user settings of a tick's Gemini CLI: the defaults, the operator's over them, the
 * runner's over all: our server, allowed and trusted, and only our tools (plus built-in ones the
 * operator names in `tools.core`).
 */
export function geminiSettings(server: { command: string; args: string[]; env: Record<string, string> }, operator: Json): Json {
  const operatorTools = asObject(operator.tools)?.core;
  const operatorServers = Object.keys(asObject(operator.mcpServers) ?? {});
  return layConfig(layConfig(DEFAULT_SETTINGS, operator), {
    mcpServers: { [MCP_SERVER_NAME]: { command: server.command, args: server.args, env: server.env, trust: true } },
    mcp: { allowed: [MCP_SERVER_NAME, ...operatorServers.filter((name) => name !== MCP_SERVER_NAME)] },
    tools: { core: [...GEMINI_TOOL_NAMES, ...(Array.isArray(operatorTools) ? operatorTools.filter((t): t is string => typeof t === 'string') : [])] },
  });
}

/** Pure: one line of `gemini --output-format stream-json` → the events the runner cares about. */
export function parseGeminiLine(line: string): HarnessEvent[] {
  let event: Json | undefined;
  try {
    event = asObject(JSON.parse(line));
  } catch {
    return [];
  }
  switch (event?.type) {
    case 'init':
      return [{ type: 'init', ...(typeof event.session_id === 'string' ? { sessionId: event.session_id } : {}), ...(typeof event.model === 'string' ? { model: event.model } : {}) }];
    case 'message':
      if (event.role !== 'assistant') return [];
      return [{ type: 'assistant', mainThread: true, text: typeof event.content === 'string' ? event.content : '', delta: event.delta === true }];
    case 'tool_use':
      return [{ type: 'tool-call' }];
    case 'tool_result':
      return [{ type: 'tool-result' }];
    case 'error':
      return [{ type: 'notice', text: `${String(event.severity ?? 'error')}: ${String(event.message ?? '')}` }];
    case 'result': {
      const stats = asObject(event.stats);
      const usage = {
        input_tokens: Math.max(0, (asNumber(stats?.input_tokens) ?? 0) - (asNumber(stats?.cached) ?? 0)),
        output_tokens: asNumber(stats?.output_tokens) ?? 0,
        cache_read_input_tokens: asNumber(stats?.cached) ?? 0,
      };
      const error = asObject(event.error);
      const ok = event.status === 'success';
      return [
        {
          type: 'result',
          isError: !ok,
          subtype: ok ? 'success' : 'error',
          text: ok ? '' : String(error?.message ?? 'Gemini CLI reported an error'),
          usage,
        },
      ];
    }
    default:
      return [];
  }
}

/**
 * Without a result (it exits before the session starts, e.g. code 41 for missing credentials),
 * what Gemini CLI said on stderr is the reason.
 */
function classifyGemini(signals: ErrorSignals, now?: number) {
  if (signals.resultSubtype === undefined && signals.stderr) {
    const cause = stderrCause(signals.stderr, 2);
    if (cause) return classifyHarnessError({ ...signals, resultIsError: true, resultSubtype: 'error', resultText: cause }, now);
  }
  return classifyHarnessError(signals, now);
}

export const geminiCliHarness: Harness = {
  name: 'gemini-cli',
  mcpStatus: 'tap',
  stopSignal: 'SIGINT',
  invocation(setup) {
    const settings = geminiSettings(setup.mcpServer, operatorHarnessConfig(setup.config));
    // One word: the prompt is the agent's, and yargs reads a separate "--yolo" as the flag, not the prompt.
    const args = ['--output-format', 'stream-json', '--skip-trust'];
    if (setup.model) args.push('--model', setup.model);
    args.push(`--prompt=${setup.prompt}`);
    return {
      command: setup.config.command ?? 'gemini',
      args,
      env: privateHarnessEnv(setup.env, setup),
      cwd: setup.cwd,
      interactiveStdin: false,
      files: [jsonFile(path.join(setup.home, '.gemini', 'settings.json'), settings)],
    };
  },
  parseLine: parseGeminiLine,
  classify: classifyGemini,
  credentialsHelp({ secretsDir, operatorConfig, name }) {
    return (
      `Give Gemini CLI a key: put a Gemini API key in ${path.join(secretsDir, 'GEMINI_API_KEY')} (one file per variable), or set up Vertex AI ` +
      `(GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION there, and runner.harness_config.security.auth.selectedType "vertex-ai" in ${operatorConfig}). ` +
      `Then \`kernel-runner resume ${name}\``
    );
  },
};
