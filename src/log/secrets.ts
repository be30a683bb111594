/**
 * Secret values that must never reach a log line. The runner registers the secrets it
 * hands to a harness with the logger that writes its lines; each has them replaced by [REDACTED].
 */

export const REDACTED = '[REDACTED]';

/**
 * Shorter values are refused where secrets are loaded: replacing "abc" everywhere would garble
 * logs, and not replacing it would leak it.
 */
export const MIN_SECRET_LENGTH = 6;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The secret values one logger redacts from every line it writes. */
export class SecretRedactor {
  private readonly secrets = new Set<string>();
  private pattern: RegExp | undefined;

  /**
   * Register secret values (API keys, tokens), each also in its JSON-escaped form since log
   * lines are JSON. Empty values are ignored; a value shorter than MIN_SECRET_LENGTH throws
   * (callers refuse those at load), without quoting it.
   */
  add(values: Iterable<string>): void {
    for (const value of values) {
      if (value === '') continue;
      if (value.length < MIN_SECRET_LENGTH) throw new Error(`A secret value shorter than ${MIN_SECRET_LENGTH} characters cannot be redacted from logs reliably; refused.`);
      this.secrets.add(value);
      const escaped = JSON.stringify(value).slice(1, -1);
      if (escaped !== value) this.secrets.add(escaped);
    }
    // Longest first, so a secret that contains another is replaced whole.
    const alternatives = [...this.secrets].sort((a, b) => b.length - a.length).map(escapeRegExp);
    this.pattern = alternatives.length === 0 ? undefined : new RegExp(alternatives.join('|'), 'g');
  }

  /** `line` with every registered secret replaced by [REDACTED]. */
  redact(line: string): string {
    return this.pattern ? line.replace(this.pattern, REDACTED) : line;
  }
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
