/**
 * How clients reach an instance's long-lived kernel: HTTP over a host-private unix socket
 * (`<state>/instances/<name>/private/kernel.sock`, in a 0700 folder the container never sees).
 *
 *   GET  /v1/health    KernelHealth (the supervisor's heartbeat; status, the web view)
 *   POST /v1/sandbox   bring the container up to date before a tick (image, recreate): only the owner may
 *   POST /v1/stop      stop gracefully (terminals detached, they live on in tmux)
 *   GET  /v1/mcp       with `Upgrade: agent-kernel-mcp/1`: one MCP session, newline-delimited
 *                      JSON-RPC both ways, exactly as over stdio, plus delivery receipts (below)
 *
 * Delivery receipts keep the guarantee that what a wait showed counts as seen only once its
 * reply reached the client: the kernel counts the lines it sends on a session from 1, and the
 * client answers `{"upto":n}` once lines 1..n were handed on (written to its stdout pipe), or
 * `{"ack":n}` for line n alone (an HTTP client's reply written to its socket). Receipts are
 * the only lines a client sends that are not JSON-RPC.
 */

export const MCP_UPGRADE = 'agent-kernel-mcp/1';
/** Request header: who connects (a tick's harness takes the agent's role at login). */
export const CLIENT_HEADER = 'x-agent-kernel-client';
/** Response header of the upgrade: the kernel's KernelHello as JSON. */
export const HELLO_HEADER = 'x-agent-kernel-hello';
/** Longest line either side accepts (a `type` of 16 KiB is far below; the HTTP transport caps bodies at 4 MiB too). */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

/** `tick`: the harness of a tick (kernel-runner says so); `person`: anyone else. */
export type KernelClientKind = 'tick' | 'person';

export interface KernelHello {
  instance: string;
  dataDir: string;
  stateRoot: string;
  pid: number;
  version: string;
}

export interface KernelHealth {
  /** `starting` until the terminals first came up, `ready`, `stopping`. */
  state: 'starting' | 'ready' | 'stopping';
  instance: string;
  dataDir: string;
  pid: number;
  version: string;
  /** Which build of the kernel runs (its bundle's size and time): a newer build on disk means an upgrade is waiting. */
  build: string;
  started: string;
  uptimeSeconds: number;
  /** When this answer was made (the heartbeat). */
  now: string;
  terminals: {
    state: 'starting' | 'ready' | 'error';
    /** Open terminals. */
    count: number;
    /** Why start-up failed (retried), when it did. */
    error?: string;
  };
  /** Resident set size and V8 heap, bytes. */
  rssBytes: number;
  heapUsedBytes: number;
  /** MCP sessions connected. */
  sessions: number;
}

/** The first line of the kernel's stdout once it serves (seed 003's READY handshake). */
export function readyLine(socketPath: string): string {
  return `READY ${socketPath}`;
}

/** Pure: a receipt line from a client, or undefined for anything else. */
export function parseReceipt(message: unknown): { upto: number } | { ack: number } | undefined {
  if (typeof message !== 'object' || message === null || 'jsonrpc' in message) return undefined;
  const { upto, ack } = message as { upto?: unknown; ack?: unknown };
  if (typeof upto === 'number' && Number.isSafeInteger(upto)) return { upto };
  if (typeof ack === 'number' && Number.isSafeInteger(ack)) return { ack };
  return undefined;
}

/**
 * `POST /v1/sandbox` answers JSON lines as the work goes on, so that a long image build is
 * neither mistaken for a silent kernel nor cut short: `{progress}` for each line of the build
 * or start-up, `{alive}` (seconds so far) at least every SANDBOX_HEARTBEAT_MS, and last either
 * a SandboxReady or a SandboxFailure.
 */
export const SANDBOX_HEARTBEAT_MS = 5_000;
/** Longest wait for the rest of a container's start-up (egress proxy, its settings inside) once it runs. */
export const CONTAINER_READY_MS = 120_000;
/** Longest wait for the terminals to be adopted again (or started) after the container changed. */
export const TERMINALS_READY_MS = 120_000;

/** A build of the agent's Containerfile that failed: where and what it printed last. */
export interface BuildFailure {
  /** The failing step as the engine names it ("Step 3/4 : RUN apt-get install -y w3m"), or '' before any step. */
  step: string;
  /** The last lines of the build's output. */
  output: string[];
  /** The engine's own words. */
  error: string;
}

export interface SandboxReady {
  sandbox: string;
  recreated: boolean;
  /** The changed Containerfile did not build: the container of the image before goes on, and the agent is told. */
  buildFailed?: BuildFailure;
}

export interface SandboxFailure {
  error: string;
  code?: string;
  /** For IMAGE_BUILD_FAILED: the step and its output. */
  buildFailed?: BuildFailure;
}

export type SandboxLine = { progress: string } | { alive: number } | SandboxReady | SandboxFailure;

/**
 * The terminals as a person's view shows them, from the kernel's own emulators (none of its own
 * in the web view), and a person's keys, in turn with the agent's calls:
 *
 *   GET  /v1/terminals/N/screen?history=L  JSON lines: one ScreenLine `screen` (the screen and up
 *                                          to L lines above it), then `out` (what it prints, in
 *                                          order) and `alive` every SCREEN_ALIVE_MS; last `ended`
 *                                          (closed, resized, the terminals restarted, or the
 *                                          reader fell SCREEN_BEHIND_BYTES behind): ask again
 *   POST /v1/terminals/N/keys              {"data": "keys as text"} → {"typed": bytes}
 */
export type ScreenLine = { screen: { cols: number; rows: number; ansi: string } } | { out: string } | { alive: true } | { ended: string };
export const SCREEN_ALIVE_MS = 15_000;
/** Lines above the screen a view may ask for: what the kernel's emulator holds (EMULATOR_SCROLLBACK). */
export const SCREEN_HISTORY_MAX = 500;
export const SCREEN_BEHIND_BYTES = 1024 * 1024;
/** The most one request may type (a paste). */
export const MAX_PERSON_KEYS_BYTES = 4096;
