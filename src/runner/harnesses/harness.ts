import type { RunnerConfig } from '../../config/agent-config.js';
import type { Classification, ErrorSignals } from './classify.js';

/** Token usage as Claude Code reports it on an assistant message or a result. */
export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/**
 * A harness is an agent CLI kernel-runner can drive (seed 004): how to start it, how it
 * gets our MCP server, how to read its output, how to tell its errors apart, how to stop it.
 * The runner knows nothing else about it.
 */
export interface Harness {
  readonly name: string;
  /** How the MCP config reaches the harness: a file named on the command line, or otherwise (documented per harness). */
  readonly mcpConfigVia: 'flag' | 'env' | 'file';
  /** The signal that asks it to stop; the runner escalates to SIGKILL of the process group after the grace period. */
  readonly stopSignal: NodeJS.Signals;
  /** For harnesses whose output is not parsed: an exit with code 0 and no result event is a success (default: a missing result is an error). */
  readonly exitCodeIsResult?: boolean;
  invocation(setup: HarnessSetup): HarnessInvocation;
  /** Parse one line of its stdout; lines that are not events give `[]`. */
  parseLine(line: string): HarnessEvent[];
  classify(signals: ErrorSignals, now?: number): Classification | undefined;
  /**
   * A stdin line that hands the running agent a user message; absent when the harness takes no input while it runs.
   * `uuid` tags it: a harness that echoes what it took (`user-replay`) names it, so the runner knows the model has it.
   */
  encodeUserMessage?(text: string, uuid?: string): string;
  /** A stdin line that asks for the MCP servers' status (answered by an `mcp-status` event). */
  encodeMcpStatusRequest?(requestId: string): string;
  /** Where the harness keeps its own transcript of the session, if it does. */
  sessionTranscriptPath?(setup: HarnessSetup, env: NodeJS.ProcessEnv): string | undefined;
}

/** Everything the runner prepared for one harness session. */
export interface HarnessSetup {
  instanceName: string;
  dataDir: string;
  /** Where the harness runs: a host-private folder (paths.ts `harnessCwd`), never the data repo. */
  cwd: string;
  tick: number;
  sessionId: string;
  /** The tick prompt: the first user message. */
  prompt: string;
  /** Generated: starts `agent-kernel serve <dataDir>` as the `agent-kernel` server. */
  mcpConfigFile: string;
  /** Generated: the hooks (PreCompact, PostToolUse, Stop) that talk back to the runner. */
  settingsFile: string;
  config: RunnerConfig;
  model: string | undefined;
  /** The environment the harness runs with (already merged: process, config env). */
  env: NodeJS.ProcessEnv;
}

export interface HarnessInvocation {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** When false, the prompt is in `args` and stdin is closed at once. */
  interactiveStdin: boolean;
}

/** The MCP server name the runner gives our server in every harness: tools are `mcp__agent-kernel__<tool>`. */
export const MCP_SERVER_NAME = 'agent-kernel';
export const KERNEL_TOOLS = ['login', 'open', 'type', 'wait', 'close'] as const;

export interface McpServerStatus {
  name: string;
  status: string;
}

/** What the runner needs to know from a harness's output, whatever its format. */
export type HarnessEvent =
  | { type: 'init'; sessionId?: string; model?: string; mcpServers: McpServerStatus[]; tools: string[] }
  | { type: 'mcp-status'; requestId: string; servers: McpServerStatus[] }
  | { type: 'assistant'; mainThread: boolean; model?: string; usage?: Usage; text: string; error?: string }
  | { type: 'tool-result' }
  /** The harness took a user message from stdin into the conversation (Claude Code's --replay-user-messages echo). */
  | { type: 'user-replay'; uuid?: string }
  | { type: 'api-retry'; status?: number | null; error?: string; attempt?: number }
  | { type: 'rate-limit'; status: string; resetsAt?: number }
  | { type: 'compacting' }
  | {
      type: 'result';
      isError: boolean;
      subtype: string;
      text: string;
      apiErrorStatus?: number | null;
      usage?: Usage;
      costUsd?: number;
      contextWindow?: number;
      numTurns?: number;
    };
