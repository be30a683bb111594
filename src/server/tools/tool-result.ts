import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeError, isCodedError, type ErrorCode } from '../../errors.js';
import type { Logger } from '../../log/logger.js';

/**
 * What follows each expected failure, when the terminal layer's message does not
 * already say it. The model reads these: they name the next call.
 */
const NEXT_STEP: Partial<Record<ErrorCode, string>> = {
  UNSEEN_OUTPUT: 'Call wait() to see the new output, then type again.',
  EXPECT_MISMATCH: 'Call wait() to see the screen, then type again with expect set to the program that is really running.',
  TTY_NOT_FOUND: 'Call wait() to list the open terminals, or open() a new one.',
  TTY_OUT_OF_RANGE: 'Call wait() to list the open terminals.',
  TTY_CAPACITY: 'Close a terminal you no longer need with close(tty), then open again.',
  TEXT_TOO_LONG: 'Send the text in smaller parts, with several type() calls.',
  UNKNOWN_KEY: 'Key names are C-c, C-d, C-z, Tab, Enter, Escape, Up, Down, Left, Right, Home, End, PageUp, PageDown, BSpace, F1-F12; anything else is sent as literal text.',
  ENGINE_UNREACHABLE: 'The container engine is down: tell the operator (agent-kernel doctor), then call login() again.',
  NOT_LOGGED_IN: 'Call login() first.',
  INSTANCE_LOCKED: 'Another agent-kernel server drives this instance; stop it, then call login() again.',
  IMAGE_BUILD_FAILED: 'Fix system/container/Containerfile (the log says where the build broke), then call login() again.',
  BASE_IMAGE_MISSING: 'Tell the operator to run agent-kernel image, then call login() again.',
  CONTAINER_FAILED: 'Call login() again; if it fails again, tell the operator (agent-kernel doctor).',
  TMUX_FAILED: 'Call login() again; if it fails again, tell the operator (agent-kernel doctor).',
};

/** How a CodedError reads in a tool result: the code, the message, the next step if it is not already there. */
export function codedErrorText(code: ErrorCode, message: string): string {
  const next = NEXT_STEP[code];
  // A message that already names a call ("call wait() first", "close(tty)") needs no second hint.
  const saysNext = next === undefined || /\b[a-z]+\([\w, ]*\)/.test(message);
  return `${code}: ${message}${saysNext ? '' : `\n${next}`}`;
}

export function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * Turn anything a tool handler threw into an isError result. Expected failures
 * (CodedError) are logged at info; anything else is a bug: logged with its stack, and
 * the model is told the server is still up.
 */
export function toolErrorResult(tool: string, error: unknown, logger: Logger): CallToolResult {
  if (isCodedError(error)) {
    logger.info({ tool, code: error.code, details: error.details }, `${tool}: ${error.message}`);
    return errorResult(codedErrorText(error.code, error.message));
  }
  logger.error({ tool, err: error }, `${tool} failed unexpectedly`);
  return errorResult(
    `INTERNAL: ${tool} failed: ${describeError(error)}. The server is still running: call wait() to see the terminals, then try again.`,
  );
}
