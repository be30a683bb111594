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
  /**
   * How the runner learns that our MCP server connected: the harness answers an MCP status
   * request on stdin (`control-request`), or the runner reads the MCP conversation through the
   * tap it puts between the harness and our server (`tap`: mcp-tap.ts).
   */
  readonly mcpStatus: 'control-request' | 'tap';
  /** The signal that asks it to stop; the runner escalates to SIGKILL of the process group after the grace period. */
  readonly stopSignal: NodeJS.Signals;
  /** For harnesses whose output is not parsed: an exit with code 0 and no result event is a success (default: a missing result is an error). */
  readonly exitCodeIsResult?: boolean;
  invocation(setup: HarnessSetup): HarnessInvocation;
  /** Parse one line of its stdout; lines that are not events give `[]`. */
  parseLine(line: string): HarnessEvent[];
  classify(signals: ErrorSignals, now?: number): Classification | undefined;
  /**
   * Checked before it starts: why it could not reach its model for want of credentials it would
   * otherwise discover only after retrying (undefined: it has some, or it reports their absence itself).
   */
  missingCredentials?(setup: HarnessSetup): string | undefined;
  /** What the operator does to give it credentials: appended to a fatal credentials error. */
  credentialsHelp(context: CredentialsContext): string;
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

/** Our MCP server, as the harness must start it (stdio): the runner hands it over in memory. */
export interface McpServerSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Where the operator gives a harness credentials (named in a fatal credentials error). */
export interface CredentialsContext {
  /** The instance's name (`kernel-runner resume <name>`). */
  name: string;
  /** The instance's secrets directory: one file per environment variable. */
  secretsDir: string;
  /** The harness's private home (its own login lands here). */
  home: string;
  /** The operator's file of the instance. */
  operatorConfig: string;
  /** `system/paused`: removing it resumes the instance. */
  paused: string;
  /** The model the operator set (`runner.model`), if any. */
  model?: string | undefined;
}

/** Everything the runner prepared for one harness session. */
export interface HarnessSetup {
  instanceName: string;
  dataDir: string;
  /** Where the harness runs, and its PWD: a host-private empty folder (paths.ts `harnessCwd`), never the data repo. */
  cwd: string;
  /**
   * The harness's own HOME, a host-private folder (paths.ts `harnessHome`): its configuration,
   * logins and sessions live there, never in the operator's home (harness-env.ts).
   */
  home: string;
  /** A host-private folder for this session's generated files (`<state>/private/tick-NNN/attempt-N`). */
  workDir: string;
  tick: number;
  sessionId: string;
  /** The tick prompt: the first user message. */
  prompt: string;
  /** Our MCP server (`agent-kernel serve <dataDir>`, or the tap in front of it): each harness writes it in its own format. */
  mcpServer: McpServerSpec;
  /** Generated: the hooks (PreCompact, PostToolUse, Stop) that talk back to the runner (Claude Code's format). */
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
  /** Private files the harness reads (its MCP config, settings): written with mode 0600 before it starts. */
  files: ReadonlyArray<{ path: string; content: string }>;
}

/** The MCP server name the runner gives our server in every harness: tools are `mcp__agent-kernel__<tool>`. */
export const MCP_SERVER_NAME = 'agent-kernel';
export const AGENT_KERNEL_TOOLS = ['login', 'open', 'type', 'wait', 'close'] as const;

export interface McpServerStatus {
  name: string;
  status: string;
}

/** What the runner needs to know from a harness's output, whatever its format. */
export type HarnessEvent =
  /** The session started. `mcpServers` and `tools` as the harness lists them, when it does (Claude Code). */
  | { type: 'init'; sessionId?: string; model?: string; mcpServers?: McpServerStatus[]; tools?: string[] }
  | { type: 'mcp-status'; requestId: string; servers: McpServerStatus[] }
  /** The model said something (`text` may be empty: it began a step). `delta`: a piece of a message streamed in parts. */
  | { type: 'assistant'; mainThread: boolean; model?: string; usage?: Usage; text: string; error?: string; delta?: boolean }
  /** Tokens (and cost) of one model call, for harnesses that report them per call rather than per result. */
  | { type: 'usage'; usage: Usage; costUsd?: number }
  | { type: 'tool-result' }
  /** The harness took a user message from stdin into the conversation (Claude Code's --replay-user-messages echo). */
  | { type: 'user-replay'; uuid?: string }
  | { type: 'api-retry'; status?: number | null; error?: string; attempt?: number }
  /** The harness called one of our tools (the result follows as `tool-result`). */
  | { type: 'tool-call' }
  /**
   * Something the harness said that is not progress (a retry, a warning): logged, never resets
   * the idle timeout. `unreachable`: it is retrying a model it cannot reach.
   */
  | { type: 'notice'; text: string; unreachable?: boolean }
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
      /** The harness's own verdict that trying again may work. */
      retryable?: boolean;
    };

/** Events that show the agent progressing (the model answered, a tool ran): they reset the idle timeout. */
export function isProgress(event: HarnessEvent): boolean {
  return event.type !== 'notice' && event.type !== 'api-retry' && event.type !== 'rate-limit';
}
