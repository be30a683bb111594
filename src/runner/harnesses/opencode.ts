import path from 'node:path';
import { classifyHarnessError, type ErrorSignals } from './classify.js';
import { type Harness, type HarnessEvent, MCP_SERVER_NAME, type Usage } from './harness.js';
import { layConfig, operatorHarnessConfig } from './harness-config.js';
import { privateHarnessEnv } from './harness-env.js';

/**
 * opencode (https://opencode.ai, `opencode-ai` on npm), headless:
 *   opencode run --format json --print-logs --log-level WARN --pure --dir <private folder> [--model provider/model] -- <prompt>
 *
 * Where it runs: opencode takes its project from $PWD (not its working directory) and loads
 * the project's opencode.json, AGENTS.md, `.opencode/` agents, commands and plugins (host
 * JavaScript) from there and from every folder up to the git root. So PWD and --dir are the
 * private harness folder, OPENCODE_DISABLE_PROJECT_CONFIG is set, and HOME is the private home
 * (no ~/.config/opencode, ~/.opencode or ~/.claude of the operator's). `--pure`: no plugin from
 * npm, and no `npm install` of opencode's plugin package into its config folders at every start
 * (offline that alone held plugin loading for two minutes).
 *
 * Our server and the tools: the runner's config goes in OPENCODE_CONFIG_CONTENT, the layer
 * opencode merges last, over the operator's `runner.harness_config` (providers, models):
 *   {"mcp": {"agent-kernel": {"type": "local", "command": [...], "environment": {...}}},
 *    "permission": {"*": "deny", ...operator's, "agent-kernel_*": "allow"}}
 * A denied tool is not offered to the model at all (measured on 1.18: only our five are), and
 * opencode applies the last rule that matches, so the operator may allow one of its own tools
 * by name, never drop ours.
 *
 * Output: `--format json` prints one event a line (step_start, text, tool_use, step_finish,
 * error); an error it reports only as "Unexpected server error … ref" has its cause in the log
 * lines `--print-logs` writes on stderr. Whether our server connected is read from the tap.
 */

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Pure: the runner's opencode config over the operator's. */
export function opencodeConfig(server: { command: string; args: string[]; env: Record<string, string> }, operator: Json): Json {
  const permission = operator.permission;
  const operatorRules = typeof permission === 'string' ? { '*': permission } : (asObject(permission) ?? {});
  return {
    ...layConfig(operator, {
      $schema: 'https://opencode.ai/config.json',
      mcp: { [MCP_SERVER_NAME]: { type: 'local', command: [server.command, ...server.args], environment: server.env, enabled: true } },
      share: 'disabled',
      autoupdate: false,
    }),
    // Built-in tools (read, edit, write, bash, glob, grep, webfetch, task, skill, todowrite…) run on the host: denied unless the operator allows one.
    permission: { '*': 'deny', ...operatorRules, [`${MCP_SERVER_NAME}_*`]: 'allow' },
  };
}

function usageOf(tokens: Json | undefined): Usage | undefined {
  if (!tokens) return undefined;
  const cache = asObject(tokens.cache);
  return {
    input_tokens: asNumber(tokens.input) ?? 0,
    output_tokens: (asNumber(tokens.output) ?? 0) + (asNumber(tokens.reasoning) ?? 0),
    cache_read_input_tokens: asNumber(cache?.read) ?? 0,
    cache_creation_input_tokens: asNumber(cache?.write) ?? 0,
  };
}

/** Pure: one line of `opencode run --format json` → the events the runner cares about. */
export function parseOpencodeLine(line: string): HarnessEvent[] {
  let event: Json | undefined;
  try {
    event = asObject(JSON.parse(line));
  } catch {
    return [];
  }
  const part = asObject(event?.part);
  switch (event?.type) {
    case 'step_start':
      return [{ type: 'assistant', mainThread: true, text: '' }];
    case 'text':
    case 'reasoning':
      return [{ type: 'assistant', mainThread: true, text: event.type === 'text' && typeof part?.text === 'string' ? part.text : '' }];
    case 'tool_use':
      return [{ type: 'tool-result' }];
    case 'step_finish': {
      const usage = usageOf(asObject(part?.tokens));
      const costUsd = asNumber(part?.cost);
      return usage ? [{ type: 'usage', usage, ...(costUsd === undefined ? {} : { costUsd }) }] : [];
    }
    case 'error': {
      const error = asObject(event.error);
      const data = asObject(error?.data);
      const name = typeof error?.name === 'string' ? error.name : 'Error';
      const message = typeof data?.message === 'string' ? data.message : JSON.stringify(data ?? {});
      const ref = typeof data?.ref === 'string' ? ` (ref ${data.ref})` : '';
      const status = asNumber(data?.statusCode);
      return [
        {
          type: 'result',
          isError: true,
          subtype: 'error',
          text: `${name}: ${message}${ref}`,
          ...(status === undefined ? {} : { apiErrorStatus: status }),
          ...(typeof data?.isRetryable === 'boolean' ? { retryable: data.isRetryable } : {}),
        },
      ];
    }
    default:
      return [];
  }
}

/**
 * Pure: the cause opencode logged for an error it reported only as "Unexpected server error …
 * (ref err_…)": the `error="…"` of its `message=failed ref=<ref>` log line.
 */
export function opencodeLoggedCause(resultText: string | undefined, stderr: string | undefined): string | undefined {
  const ref = /\(ref (err_[A-Za-z0-9]+)\)/.exec(resultText ?? '')?.[1];
  if (!ref || !stderr) return undefined;
  const line = stderr.split('\n').findLast((l) => l.includes(`ref=${ref}`));
  const cause = line ? /\berror="((?:[^"\\]|\\.)*)"/.exec(line)?.[1] : undefined;
  return cause?.replace(/\\"/g, '"');
}

function classifyOpencode(signals: ErrorSignals, now?: number) {
  // It reports errors only: with none, its exit code decides (exitCodeIsResult).
  if (!signals.resultIsError) return undefined;
  const cause = opencodeLoggedCause(signals.resultText, signals.stderr);
  const classification = classifyHarnessError(cause ? { ...signals, resultText: cause } : signals, now);
    // opencode knows a provider's models only once it has the provider's credentials: "Model not found" may mean either.
  if (classification?.errorClass === 'fatal' && /ProviderModelNotFoundError|ProviderAuthError|model not found/i.test(classification.reason)) {
    return { ...classification, credentials: true };
  }
  return classification;
}

export const opencodeHarness: Harness = {
  name: 'opencode',
  mcpStatus: 'tap',
  stopSignal: 'SIGINT',
  exitCodeIsResult: true,
  invocation(setup) {
    const config = opencodeConfig(setup.mcpServer, operatorHarnessConfig(setup.config));
    const args = ['run', '--format', 'json', '--print-logs', '--log-level', 'WARN', '--pure', '--dir', setup.cwd];
    if (setup.model) args.push('--model', setup.model);
    // After "--": the prompt is the agent's, and one starting with "-" would be read as options ("--share").
    args.push('--', setup.prompt);
    return {
      command: setup.config.command ?? 'opencode',
      args,
      env: {
        ...privateHarnessEnv(setup.env, setup),
        OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
        OPENCODE_DISABLE_PROJECT_CONFIG: '1',
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_CLAUDE_CODE: '1',
      },
      cwd: setup.cwd,
      interactiveStdin: false,
      files: [],
    };
  },
  parseLine: parseOpencodeLine,
  classify: classifyOpencode,
  credentialsHelp({ secretsDir, home, name, model }) {
    const provider = model?.split('/')[0];
    const variable = provider ? `${provider.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_API_KEY` : '<PROVIDER>_API_KEY';
    return (
      `opencode offers a model only when its provider has credentials: put the provider's key in ${path.join(secretsDir, variable)} ` +
      `(one file per variable), or log in with \`HOME=${home} opencode auth login\`; \`HOME=${home} opencode models\` lists the models it can use ` +
      `(runner.model is provider/model). Then \`kernel-runner resume ${name}\``
    );
  },
};
