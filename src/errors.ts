/**
 * The coded errors of agent-kernel. Every message is written for whoever reads it
 * (an operator at a shell, or the model through a tool result): what failed, the bad
 * value, and the next step.
 */
export type ErrorCode =
  // usage and configuration
  | 'USAGE'
  | 'CONFIG_INVALID'
  | 'CONFIG_REFUSED'
  | 'INSTANCE_NOT_FOUND'
  | 'INSTANCE_NAME_INVALID'
  // a file the container can write that the host refuses to read (a link, a FIFO, too big)
  | 'UNTRUSTED_FILE'
  // container engine and sandbox
  | 'ENGINE_UNREACHABLE'
  | 'IMAGE_BUILD_FAILED'
  | 'BASE_IMAGE_MISSING'
  | 'CONTAINER_FAILED'
  | 'EXEC_FAILED'
  // terminals
  | 'NOT_LOGGED_IN'
  | 'OBSERVING'
  | 'TTY_NOT_FOUND'
  | 'TTY_OUT_OF_RANGE'
  | 'TTY_CAPACITY'
  | 'TTY_IN_USE'
  | 'UNSEEN_OUTPUT'
  | 'EXPECT_MISMATCH'
  | 'UNKNOWN_KEY'
  | 'TEXT_TOO_LONG'
  | 'INSTANCE_LOCKED'
  // the server let go of its terminals (stopping, or starting them again)
  | 'SHUTTING_DOWN'
  // the instance's container belongs to another state directory (another owner)
  | 'INSTANCE_OWNED'
  // the long-lived kernel of an instance
  | 'KERNEL_UNREACHABLE'
  | 'TMUX_FAILED'
  // runner
  | 'TICK_RUNNING'
  | 'INSTANCE_PAUSED'
  | 'HARNESS_MISSING'
  | 'HARNESS_FAILED'
  // snapshots of an instance (src/snapshot)
  | 'SNAPSHOT_NOT_FOUND'
  | 'SNAPSHOT_REFUSED'
  | 'SNAPSHOT_MISMATCH'
  | 'INSTANCE_SUSPENDED'
  | 'INTERNAL';

export class CodedError extends Error {
  readonly code: ErrorCode;
  /** Facts about the failure that a caller may want to show or test (the bad value, a PID...). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CodedError';
    this.code = code;
    this.details = options.details ?? {};
  }
}

export function isCodedError(error: unknown, code?: ErrorCode): error is CodedError {
  return error instanceof CodedError && (code === undefined || error.code === code);
}

/** A one-line description of any thrown value, for logs and results. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
