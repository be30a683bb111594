/**
 * What went wrong in a tick, read from the harness's stream (never from its exit code,
 * which says nothing about why). Each class has one remedy:
 * - transient: retry with backoff (overloaded, 5xx, network, 429 without a reset time)
 * - rate_limit: a subscription limit with a reset time; wait until then
 * - fatal: a person must act (login, key, billing, model name, prompt size); the instance is paused
 * - limit: the harness stopped at a configured limit (max turns, budget)
 * - context, timeout, idle, aborted: the runner ended the tick
 * - mcp: our MCP server did not connect
 * - harness: the harness failed in a way none of the above explains
 */
export type ErrorClass = 'transient' | 'rate_limit' | 'fatal' | 'limit' | 'context' | 'timeout' | 'idle' | 'aborted' | 'mcp' | 'harness';

/** The facts a harness extracts from its output that bear on an error. */
export interface ErrorSignals {
  resultIsError?: boolean;
  resultSubtype?: string;
  resultText?: string;
  apiErrorStatus?: number | null;
  /** Claude Code's `assistant.error` ("authentication_failed", "billing_error", "rate_limit", "server_error"...). */
  assistantError?: string;
  assistantText?: string;
  /** The latest rate-limit report; `resetsAt` in epoch milliseconds. */
  rateLimit?: { status: string; resetsAt?: number };
  /** The latest retry the harness made itself. */
  lastRetry?: { status?: number | null; error?: string };
  /** The harness's own verdict on its error: trying again may work. */
  retryable?: boolean;
  /** The latest notice: the harness said it cannot reach its model (and was retrying). */
  unreachable?: string;
  /** The end of what the harness wrote on stderr, where some CLIs put the cause of an error. */
  stderr?: string;
}

export interface Classification {
  errorClass: ErrorClass;
  reason: string;
  /** For rate_limit: how long until the limit resets. */
  retryAfterMs?: number;
  /** A fatal error for want of credentials: the operator is told how to give the harness some. */
  credentials?: boolean;
}

/** A harness without credentials, as Claude Code, opencode, Gemini CLI and Codex CLI say it. */
const CREDENTIALS_TEXT =
  /not logged in|please run \/login|invalid api key|invalid x-api-key|incorrect api key|api key not valid|api key is missing|loadapikeyerror|missing (bearer|authentication|api key)|missing environment variable|must specify the \w+ environment variable|please set an auth method|401 unauthorized|authentication[_ ]failed|oauth token (has )?expired/i;
const FATAL_TEXT =
  /credit balance|billing|payment|organization (has been )?disabled|model\b.*\bnot (be )?found|not_found_error|does not exist|prompt is too long|permission_error/i;
const TRANSIENT_TEXT =
  /overloaded|api error: 5\d\d|internal server error|bad gateway|service unavailable|gateway timeout|econnreset|etimedout|econnrefused|enotfound|eai_again|socket hang up|fetch failed|network|connection (error|failed|refused)|cannot connect to api|unable to connect|stream disconnected|error sending request|request timed out|rate[_ ]limit|too many requests/i;
const USAGE_LIMIT_TEXT = /usage limit reached\|(\d{9,13})/i;

const FATAL_ASSISTANT_ERRORS = new Set(['authentication_failed', 'billing_error', 'invalid_request']);
const TRANSIENT_ASSISTANT_ERRORS = new Set(['rate_limit', 'server_error', 'overloaded', 'network_error']);

function isTransientStatus(status: number | null | undefined): boolean {
  return status === 429 || status === 408 || status === 409 || status === 529 || (status !== null && status !== undefined && status >= 500 && status < 600);
}

function isFatalStatus(status: number | null | undefined): boolean {
  return status === 401 || status === 402 || status === 403 || status === 404 || status === 413;
}

/** Epoch seconds or milliseconds → milliseconds. */
function toEpochMs(value: number): number {
  return value < 1e12 ? value * 1000 : value;
}

/**
 * Pure: classify a finished harness session. `undefined` means no error: the session
 * ended with a successful result.
 */
export function classifyHarnessError(signals: ErrorSignals, now: number = Date.now()): Classification | undefined {
  const text = [...new Set([signals.resultText, signals.assistantText].filter(Boolean))].join(' | ');
  const reason = text || signals.assistantError || (signals.apiErrorStatus ? `API error ${signals.apiErrorStatus}` : '') || 'no reason given';

  if (!signals.resultIsError && signals.resultSubtype === 'success' && !signals.assistantError) return undefined;

  if (signals.resultSubtype === 'error_max_turns' || signals.resultSubtype === 'error_max_budget_usd') {
    return { errorClass: 'limit', reason: `stopped at a configured limit (${signals.resultSubtype})` };
  }

  if (signals.rateLimit?.status === 'rejected' && signals.rateLimit.resetsAt) {
    const resetsAt = toEpochMs(signals.rateLimit.resetsAt);
    return { errorClass: 'rate_limit', reason: `usage limit reached; resets at ${new Date(resetsAt).toISOString()}`, retryAfterMs: Math.max(0, resetsAt - now) };
  }
  const usageLimit = USAGE_LIMIT_TEXT.exec(text);
  if (usageLimit?.[1]) {
    const resetsAt = toEpochMs(Number(usageLimit[1]));
    return { errorClass: 'rate_limit', reason: `usage limit reached; resets at ${new Date(resetsAt).toISOString()}`, retryAfterMs: Math.max(0, resetsAt - now) };
  }

  if (CREDENTIALS_TEXT.test(text) || signals.apiErrorStatus === 401 || signals.assistantError === 'authentication_failed') {
    return { errorClass: 'fatal', reason, credentials: true };
  }
  if (
    isFatalStatus(signals.apiErrorStatus) ||
    (signals.assistantError !== undefined && FATAL_ASSISTANT_ERRORS.has(signals.assistantError)) ||
    FATAL_TEXT.test(text)
  ) {
    return { errorClass: 'fatal', reason };
  }

  if (
    isTransientStatus(signals.apiErrorStatus) ||
    (signals.assistantError !== undefined && TRANSIENT_ASSISTANT_ERRORS.has(signals.assistantError)) ||
    TRANSIENT_TEXT.test(text) ||
    isTransientStatus(signals.lastRetry?.status) ||
    signals.retryable === true
  ) {
    return { errorClass: 'transient', reason };
  }

  if (!signals.resultSubtype && !signals.resultIsError && !signals.assistantError) {
    return { errorClass: 'harness', reason: 'the harness ended without a result' };
  }
  return { errorClass: 'harness', reason };
}

/** A stack frame, or what is left of a JSON object printed a line at a time: never the cause a person needs. */
const NOISE_LINE = /^\s*(at\s|[{}[\](),]+$|"[^"]*":\s*[{[]?$|\(Use `node --trace-warnings)/;

/**
 * Pure: the lines of a harness's stderr that say what went wrong (the last `count`), without
 * stack frames, JSON fragments and warnings about the terminal, each at most 300 characters.
 */
export function stderrCause(stderr: string, count = 3): string {
  return stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !NOISE_LINE.test(line) && !/^(Warning: 256-color|Ripgrep is not available|WARNING: proceeding|Reading additional input from stdin)/.test(line))
    .slice(-count)
    .map((line) => (line.length > 300 ? `${line.slice(0, 300)}…` : line))
    .join(' | ');
}

/** Whether a class is worth retrying within the same tick. */
export function isRetryable(errorClass: ErrorClass | undefined): boolean {
  return errorClass === 'transient' || errorClass === 'rate_limit';
}
