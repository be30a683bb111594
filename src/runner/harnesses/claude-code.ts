import os from 'node:os';
import path from 'node:path';
import { classifyHarnessError } from './classify.js';
import type { Usage } from './harness.js';
import { type Harness, type HarnessEvent, type HarnessSetup, AGENT_KERNEL_TOOLS, MCP_SERVER_NAME, type McpServerStatus } from './harness.js';
import { mcpConfigFile } from './mcp-server-spec.js';

/**
 * Claude Code in print mode with stream-json on both sides: the prompt and any message
 * that arrives during the tick are user messages on stdin, events come back one JSON
 * object a line. Our MCP server comes in through `--mcp-config <file> --strict-mcp-config`
 * (nothing else the user configured is loaded); the runner's hooks through `--settings`.
 * It runs in a host-private empty folder (HarnessSetup.cwd), so no CLAUDE.md, settings or
 * skills the agent wrote into its data repo are loaded on the host (PWD is that folder too).
 * Its home stays the operator's (`--setting-sources user`): Claude Code's own login is one of
 * the ways to give ticks credentials.
 */

/**
 * Claude Code's own tools the agent gets by default (`--tools`): its task list, nothing that
 * touches files, processes or the network. Those tools run on the host, outside the
 * container: Read would read any host file (read-only tools need no permission), and Read,
 * Write and Edit follow links the container plants in the data repo. The terminals replace
 * them all; the data repo is at the same path inside the container. Names the installed
 * version does not know are left out by it (TodoWrite is the task list of older versions).
 */
export const DEFAULT_BUILTIN_TOOLS = ['TaskCreate', 'TaskGet', 'TaskList', 'TaskUpdate', 'TodoWrite'];
export const DEFAULT_DISALLOWED_TOOLS = ['Bash'];

/** Permission rules for the defaults: our five tools. */
export function defaultAllowedTools(): string[] {
  return AGENT_KERNEL_TOOLS.map((tool) => `mcp__${MCP_SERVER_NAME}__${tool}`);
}

function buildArgs(setup: HarnessSetup, mcpConfigPath: string): string[] {
  const config = setup.config;
  const args = [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--input-format',
    'stream-json',
    // Echo each user message as Claude Code takes it into the conversation: the runner counts a message delivered only then.
    '--replay-user-messages',
    '--mcp-config',
    mcpConfigPath,
    '--strict-mcp-config',
    '--session-id',
    setup.sessionId,
    '--settings',
    setup.settingsFile,
    // Settings in the data repo (.claude/settings*.json) are the agent's to edit: never load them.
    '--setting-sources',
    'user',
    '--permission-mode',
    config.permission_mode,
  ];
  if (setup.model) args.push('--model', setup.model);
  // The tool lists are variadic: one comma-separated value each, so nothing after them is swallowed.
  args.push('--tools', (config.builtin_tools ?? DEFAULT_BUILTIN_TOOLS).join(','));
  args.push('--allowedTools', (config.allowed_tools ?? defaultAllowedTools()).join(','));
  args.push('--disallowedTools', (config.disallowed_tools ?? DEFAULT_DISALLOWED_TOOLS).join(','));
  if (config.append_system_prompt) args.push('--append-system-prompt', config.append_system_prompt);
  if (config.max_turns !== undefined) args.push('--max-turns', String(config.max_turns));
  if (config.max_budget_usd !== undefined) args.push('--max-budget-usd', String(config.max_budget_usd));
  return args;
}

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function serverStatuses(value: unknown): McpServerStatus[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry) => {
    const server = asObject(entry);
    const name = asString(server?.name);
    return name ? [{ name, status: asString(server?.status) ?? 'unknown' }] : [];
  });
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => asObject(block))
    .filter((block) => block?.type === 'text')
    .map((block) => asString(block?.text) ?? '')
    .join('\n');
}

/** Pure: one stream-json line → the events the runner cares about. */
export function parseClaudeCodeLine(line: string): HarnessEvent[] {
  let event: Json | undefined;
  try {
    event = asObject(JSON.parse(line));
  } catch {
    return [];
  }
  if (!event) return [];
  const type = asString(event.type);
  const subtype = asString(event.subtype);

  if (type === 'system' && subtype === 'init') {
    const tools = Array.isArray(event.tools) ? event.tools.filter((t): t is string => typeof t === 'string') : [];
    return [{ type: 'init', sessionId: asString(event.session_id), model: asString(event.model), mcpServers: serverStatuses(event.mcp_servers), tools }];
  }
  if (type === 'system' && subtype === 'api_retry') {
    const status = event.error_status === null ? null : asNumber(event.error_status);
    return [{ type: 'api-retry', status, error: asString(event.error), attempt: asNumber(event.attempt) }];
  }
  if (type === 'system' && subtype === 'status' && event.status === 'compacting') return [{ type: 'compacting' }];
  if (type === 'system' && subtype === 'compact_boundary') return [{ type: 'compacting' }];

  if (type === 'control_response') {
    const response = asObject(event.response);
    const requestId = asString(response?.request_id);
    const inner = asObject(response?.response);
    if (requestId && inner && 'mcpServers' in inner) return [{ type: 'mcp-status', requestId, servers: serverStatuses(inner.mcpServers) }];
    return [];
  }

  if (type === 'rate_limit_event') {
    const info = asObject(event.rate_limit_info) ?? event;
    const resetsAt = asNumber(info.resetsAt) ?? asNumber(info.resets_at);
    return [{ type: 'rate-limit', status: asString(info.status) ?? 'unknown', ...(resetsAt === undefined ? {} : { resetsAt }) }];
  }

  if (type === 'assistant') {
    const message = asObject(event.message);
    return [
      {
        type: 'assistant',
        mainThread: event.parent_tool_use_id === null || event.parent_tool_use_id === undefined,
        model: asString(message?.model),
        usage: asObject(message?.usage) as Usage | undefined,
        text: textOf(message?.content),
        error: asString(event.error),
      },
    ];
  }
  if (type === 'user') return event.isReplay === true ? [{ type: 'user-replay', uuid: asString(event.uuid) }] : [{ type: 'tool-result' }];

  if (type === 'result') {
    const modelUsage = asObject(event.modelUsage);
    const windows = Object.values(modelUsage ?? {})
      .map((entry) => asNumber(asObject(entry)?.contextWindow))
      .filter((n): n is number => n !== undefined);
    const status = event.api_error_status === null ? null : asNumber(event.api_error_status);
    const errors = Array.isArray(event.errors) ? event.errors.filter((e): e is string => typeof e === 'string').join('; ') : '';
    return [
      {
        type: 'result',
        isError: event.is_error === true,
        subtype: subtype ?? 'unknown',
        text: asString(event.result) ?? errors,
        apiErrorStatus: status,
        usage: asObject(event.usage) as Usage | undefined,
        costUsd: asNumber(event.total_cost_usd),
        contextWindow: windows.length > 0 ? Math.max(...windows) : undefined,
        numTurns: asNumber(event.num_turns),
      },
    ];
  }
  return [];
}

/** Claude Code's project folder name for a working directory: every other character becomes "-". */
export function claudeProjectDirName(cwd: string): string {
  return path.resolve(cwd).replace(/[^A-Za-z0-9]/g, '-');
}

export const claudeCodeHarness: Harness = {
  name: 'claude-code',
  mcpStatus: 'control-request',
  stopSignal: 'SIGINT',
  invocation(setup) {
    const mcpConfig = mcpConfigFile(setup.workDir, setup.mcpServer);
    return {
      command: setup.config.command ?? 'claude',
      args: buildArgs(setup, mcpConfig.path),
      env: {
        // Its home stays the operator's: Claude Code's own login (~/.claude) is one way to give ticks credentials.
        ...setup.env,
        PWD: setup.cwd,
        // A tick must not update itself or phone home for extras mid-run.
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        // One retry policy, the runner's (recorded, shown in status): Claude Code's own ten retries of an
        // unreachable API hid the cause for minutes. Two quick ones still ride out a blip mid-conversation.
        CLAUDE_CODE_MAX_RETRIES: setup.env.CLAUDE_CODE_MAX_RETRIES ?? '2',
      },
      cwd: setup.cwd,
      interactiveStdin: true,
      files: [mcpConfig],
    };
  },
  credentialsHelp({ name }) {
    // The whole steps (with the API-key way and the resume) come with the paused notice (fatal-fix.ts).
    return `fix: claude setup-token, then kernel-runner secret set ${name} CLAUDE_CODE_OAUTH_TOKEN`;
  },
  parseLine: parseClaudeCodeLine,
  classify: classifyHarnessError,
  encodeUserMessage(text, uuid) {
    return JSON.stringify({ type: 'user', ...(uuid ? { uuid } : {}), message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' });
  },
  encodeMcpStatusRequest(requestId) {
    return JSON.stringify({ type: 'control_request', request_id: requestId, request: { subtype: 'mcp_status' } });
  },
  sessionTranscriptPath(setup, env) {
    const configDir = env.CLAUDE_CONFIG_DIR || path.join(env.HOME || os.homedir(), '.claude');
    return path.join(configDir, 'projects', claudeProjectDirName(setup.cwd), `${setup.sessionId}.jsonl`);
  },
};
