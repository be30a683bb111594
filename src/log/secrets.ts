/**
 * Secret values that must never reach a log line. The runner registers the secrets it
 * hands to a harness; every line the logger writes has them replaced by [REDACTED].
 */

export const REDACTED = '[REDACTED]';

/** Shorter values are ignored: replacing "abc" everywhere would garble logs and protect nothing. */
export const MIN_SECRET_LENGTH = 6;

const secrets = new Set<string>();
let pattern: RegExp | undefined;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function rebuild(): void {
  // Longest first, so a secret that contains another is replaced whole.
  const alternatives = [...secrets].sort((a, b) => b.length - a.length).map(escapeRegExp);
  pattern = alternatives.length === 0 ? undefined : new RegExp(alternatives.join('|'), 'g');
}

/**
 * Register secret values (API keys, tokens). Each is also registered in its JSON-escaped
 * form, since log lines are JSON. Returns how many values were accepted.
 */
export function registerSecrets(values: Iterable<string>): number {
  let accepted = 0;
  for (const value of values) {
    if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) continue;
    secrets.add(value);
    const escaped = JSON.stringify(value).slice(1, -1);
    if (escaped !== value) secrets.add(escaped);
    accepted += 1;
  }
  rebuild();
  return accepted;
}

/** Forget every registered secret (tests). */
export function clearSecrets(): void {
  secrets.clear();
  rebuild();
}

/** `line` with every registered secret replaced by [REDACTED]. */
export function redactSecrets(line: string): string {
  if (!pattern) return line;
  pattern.lastIndex = 0;
  return line.replace(pattern, REDACTED);
}

/**
 * Keys whose values pino replaces wherever they appear at the top level or one level
 * down (`{ token }`, `{ headers: { authorization } }`).
 */
const SECRET_KEYS = [
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'apiKey',
  'api_key',
  'password',
  'passwd',
  'secret',
  'secrets',
  'authorization',
  'Authorization',
  'cookie',
  'ANTHROPIC_API_KEY',
  'AGENT_KERNEL_TOKEN',
  'CLAUDE_CODE_OAUTH_TOKEN',
];

export const REDACT_PATHS: readonly string[] = SECRET_KEYS.flatMap((key) => [key, `*.${key}`]);
