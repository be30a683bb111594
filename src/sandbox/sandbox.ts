import type { Readable, Writable } from 'node:stream';

/**
 * Where the agent's processes run. Two kinds: `docker` (a hardened container through
 * Docker or Podman) and `host` (this machine, for a server that already runs inside a
 * sandbox). The terminal layer (`src/tty`) only ever talks to this interface.
 */
export interface Sandbox {
  readonly kind: 'docker' | 'host';
  /** A short description for logs and `doctor` ("container agent-kernel-foo (docker 20.10.24)"). */
  readonly description: string;
  /**
   * Start a long-lived process with plain pipes (no TTY): stdout and stderr are separate,
   * demultiplexed streams. Used for the tmux control-mode client.
   */
  spawn(argv: readonly string[], options?: SpawnOptions): Promise<SandboxProcess>;
  /** Run a command to completion and collect its output. Never throws for a non-zero exit. */
  run(argv: readonly string[], options?: RunOptions): Promise<RunResult>;
  /**
   * Present on a remote engine only, where host folders cannot be mounted: copy the host-private
   * folder `source` to where the container sees it (`target`). Call it after writing the folder.
   */
  showHostFolder?(source: string, target: string): Promise<void>;
}

export interface SpawnOptions {
  env?: Readonly<Record<string, string>>;
  cwd?: string;
  user?: string;
}

export interface RunOptions extends SpawnOptions {
  /** Written to stdin, then stdin is closed. */
  input?: string | Uint8Array;
  /** Kill (or abandon) the command after this long; `timedOut` is then true. */
  timeoutMs?: number;
  /** Kill (or abandon) it once stdout or stderr holds this much (default MAX_OUTPUT_BYTES); `outputCapped` is then true. */
  maxOutputBytes?: number;
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** It printed more than maxOutputBytes: stopped, and stdout/stderr hold the first that many bytes. */
  outputCapped?: boolean;
}

export interface SandboxProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Resolves with the exit code once the process has ended (or the connection to it is gone: -1). */
  readonly exited: Promise<number>;
  /** Drop our end. For a container exec this closes the connection; tmux clients then exit on their own. */
  close(): void;
}
