import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeError } from '../../errors.js';

/**
 * Does Claude Code have credentials for an unattended tick? Asked of Claude Code itself,
 * without a model call: `claude auth status --json` (2.1.x) reads the environment, its
 * apiKeyHelper and its own login (`claude auth login`, in $CLAUDE_CONFIG_DIR or ~/.claude),
 * and exits 1 when none is there. It does not ask the API whether they are still valid: a
 * revoked key or an expired subscription shows at the first tick, which pauses with the fix.
 */

/** The variables Claude Code takes credentials from, in its order (ANTHROPIC_AUTH_TOKEN wins over CLAUDE_CODE_OAUTH_TOKEN). */
export const CREDENTIAL_VARIABLES = ['ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_API_KEY'] as const;

export interface ClaudeAuth {
  loggedIn: boolean;
  /** Claude Code's words: api_key, oauth_token, claude.ai, third_party, none. */
  method: string;
  /** What supplies them, for a person: a variable name, "apiKeyHelper", Claude Code's own login. */
  source: string;
  /** Where the variable came from, when it is one: filled in by the caller (credentialOrigin). */
  variable?: string;
}

/** Pure: `claude auth status --json`'s output, with the environment it ran in, as a ClaudeAuth; undefined when it is not that JSON. */
export function parseAuthStatus(stdout: string, env: Readonly<Record<string, string | undefined>>): ClaudeAuth | undefined {
  let status: Record<string, unknown>;
  try {
    status = JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof status !== 'object' || status === null || typeof status.loggedIn !== 'boolean') return undefined;
  const method = typeof status.authMethod === 'string' ? status.authMethod : 'unknown';
  if (!status.loggedIn) return { loggedIn: false, method, source: 'none' };
  if (method === 'oauth_token') {
    const variable = CREDENTIAL_VARIABLES.find((name) => name !== 'ANTHROPIC_API_KEY' && env[name]);
    return { loggedIn: true, method, source: variable ?? 'an OAuth token', ...(variable ? { variable } : {}) };
  }
  if (method === 'api_key') {
    const source = typeof status.apiKeySource === 'string' ? status.apiKeySource : 'an API key';
    return { loggedIn: true, method, source, ...(/^[A-Z_][A-Z0-9_]*$/.test(source) ? { variable: source } : {}) };
  }
  if (method === 'claude.ai') {
    const plan = typeof status.subscriptionType === 'string' ? ` (${status.subscriptionType})` : '';
    return { loggedIn: true, method, source: `Claude Code's own login${plan}, kept in ${env.CLAUDE_CONFIG_DIR ?? '~/.claude'}` };
  }
  const provider = typeof status.apiProvider === 'string' ? status.apiProvider : method;
  return { loggedIn: true, method, source: `${provider}'s own credentials` };
}

/**
 * Run `<command> auth status --json` with the environment a tick gives Claude Code. It runs in
 * an empty folder of its own: Claude Code reads project settings (an apiKeyHelper is a
 * command) from where it starts, and nothing there may be the agent's.
 */
export async function claudeAuthStatus(command: string, env: Readonly<Record<string, string>>, timeoutMs = 30_000): Promise<ClaudeAuth> {
  const cwd = await mkdtemp(path.join(os.tmpdir(), 'agent-kernel-auth-'));
  try {
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(command, ['auth', 'status', '--json'], { cwd, env, timeout: timeoutMs, maxBuffer: 1024 * 1024 }, (error, out, err) => {
        // Logged out is exit 1 with the JSON on stdout.
        if (error && !out.trim()) reject(new Error(`${command} auth status failed: ${(err.trim().split('\n')[0] ?? '') || describeError(error)}`));
        else resolve(out);
      });
    });
    const auth = parseAuthStatus(stdout, env);
    if (!auth) throw new Error(`${command} auth status --json printed no status this version of agent-kernel can read (a Claude Code older than 2.1?)`);
    return auth;
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

/** The environment a tick gives the harness: the runner's own, the secrets, then runner.env (which wins). */
export interface TickEnvironmentParts {
  readonly base: Readonly<Record<string, string | undefined>>;
  readonly secrets: Readonly<Record<string, string>>;
  readonly secretsDir: string;
  readonly configured: Readonly<Record<string, string>>;
  readonly operatorConfig: string;
}

/** Pure: where a variable of the tick's environment comes from, for a person. */
export function credentialOrigin(variable: string, parts: TickEnvironmentParts): string {
  if (parts.configured[variable] !== undefined) return `runner.env in ${parts.operatorConfig}`;
  if (parts.secrets[variable] !== undefined) return `the secrets directory (${path.join(parts.secretsDir, variable)})`;
  return "this shell's environment: a watch started elsewhere (the systemd unit of kernel-runner install) does not have it";
}

/** Pure: the commands that give Claude Code credentials for an instance's ticks, one step a line. */
export function credentialFix(name: string): string[] {
  return [
    'claude setup-token   (prints a one-year token for your Claude subscription)',
    `kernel-runner secret set ${name} CLAUDE_CODE_OAUTH_TOKEN   (paste the token)`,
    `  or, with an API key from console.anthropic.com: kernel-runner secret set ${name} ANTHROPIC_API_KEY`,
  ];
}
