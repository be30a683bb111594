import { describe, expect, it } from 'vitest';
import { credentialOrigin, parseAuthStatus } from '../../../../src/runner/harnesses/claude-credentials.js';
import { fatalFix } from '../../../../src/runner/tick/fatal-fix.js';
import { checkSecret } from '../../../../src/runner/secrets/secret-files.js';
import type { Instance } from '../../../../src/config/instance.js';

// `claude auth status --json` as the pinned Claude Code 2.1.197 prints it (read off the real binary).
const LOGGED_OUT = '{\n  "loggedIn": false,\n  "authMethod": "none",\n  "apiProvider": "firstParty"\n}\n';

describe('parseAuthStatus', () => {
  it.each<[string, string, Record<string, string>, ReturnType<typeof parseAuthStatus>]>([
    ['logged out', LOGGED_OUT, {}, { loggedIn: false, method: 'none', source: 'none' }],
    [
      'an API key',
      '{"loggedIn":true,"authMethod":"api_key","apiProvider":"firstParty","apiKeySource":"ANTHROPIC_API_KEY"}',
      { ANTHROPIC_API_KEY: 'k' },
      { loggedIn: true, method: 'api_key', source: 'ANTHROPIC_API_KEY', variable: 'ANTHROPIC_API_KEY' },
    ],
    [
      'a token from claude setup-token',
      '{"loggedIn":true,"authMethod":"oauth_token","apiProvider":"firstParty"}',
      { CLAUDE_CODE_OAUTH_TOKEN: 't' },
      { loggedIn: true, method: 'oauth_token', source: 'CLAUDE_CODE_OAUTH_TOKEN', variable: 'CLAUDE_CODE_OAUTH_TOKEN' },
    ],
    [
      'ANTHROPIC_AUTH_TOKEN wins over CLAUDE_CODE_OAUTH_TOKEN, as in Claude Code',
      '{"loggedIn":true,"authMethod":"oauth_token","apiProvider":"firstParty","apiKeySource":"ANTHROPIC_API_KEY"}',
      { CLAUDE_CODE_OAUTH_TOKEN: 't', ANTHROPIC_AUTH_TOKEN: 'a' },
      { loggedIn: true, method: 'oauth_token', source: 'ANTHROPIC_AUTH_TOKEN', variable: 'ANTHROPIC_AUTH_TOKEN' },
    ],
    [
      'its own login',
      '{"loggedIn":true,"authMethod":"claude.ai","apiProvider":"firstParty","email":null,"subscriptionType":"max"}',
      {},
      { loggedIn: true, method: 'claude.ai', source: "Claude Code's own login (max), kept in ~/.claude" },
    ],
    ['Bedrock', '{"loggedIn":true,"authMethod":"third_party","apiProvider":"bedrock"}', {}, { loggedIn: true, method: 'third_party', source: "bedrock's own credentials" }],
    ['not that JSON (an older Claude Code)', 'error: unknown command auth', {}, undefined],
  ])('%s', (_name, stdout, env, expected) => {
    expect(parseAuthStatus(stdout, env)).toEqual(expected);
  });
});

describe('credentialOrigin', () => {
  const parts = { base: {}, secrets: { CLAUDE_CODE_OAUTH_TOKEN: 's' }, secretsDir: '/c/secrets/scout', configured: { ANTHROPIC_API_KEY: 'k' }, operatorConfig: '/c/instances/scout.json' };
  it('names the secrets file, the operator file, or the shell (which a systemd watch lacks)', () => {
    expect(credentialOrigin('CLAUDE_CODE_OAUTH_TOKEN', parts)).toBe('the secrets directory (/c/secrets/scout/CLAUDE_CODE_OAUTH_TOKEN)');
    expect(credentialOrigin('ANTHROPIC_API_KEY', parts)).toBe('runner.env in /c/instances/scout.json');
    expect(credentialOrigin('ANTHROPIC_AUTH_TOKEN', parts)).toMatch(/^this shell's environment: a watch started elsewhere .* does not have it$/);
  });
});

describe('fatalFix', () => {
  const instance = (harness: string) =>
    ({ name: 'scout', paths: { operatorConfig: '/c/instances/scout.json' }, config: { runner: { harness } } }) as unknown as Pick<Instance, 'name' | 'paths' | 'config'>;
  it.each([
    ['Not logged in · Please run /login', 'claude setup-token'],
    ['Invalid API key · Fix external API key', 'claude setup-token'],
    ['OAuth token has expired', 'claude setup-token'],
    ['Credit balance is too low', 'add credit'],
    ['model: claude-nope not_found_error', 'set runner.model in /c/instances/scout.json'],
    ['Prompt is too long', 'shorten the tick prompt'],
    ['something else entirely', 'fix the cause above'],
  ])('%s → %s…, then resume', (reason, first) => {
    const steps = fatalFix(instance('claude-code'), reason);
    expect(steps[0]).toContain(first);
    expect(steps.at(-1)).toBe('kernel-runner resume scout');
  });

  it("gives Claude Code's login steps only for Claude Code", () => {
    expect(fatalFix(instance('opencode'), 'Not logged in')[0]).toContain('fix the cause above');
  });
});

describe('checkSecret', () => {
  it('keeps one line without its trailing newline', () => {
    expect(checkSecret('CLAUDE_CODE_OAUTH_TOKEN', 'sk-ant-oat01-abcdef\n')).toBe('sk-ant-oat01-abcdef');
  });
  it.each([
    ['BAD-NAME', 'sk-ant-oat01-abcdef', /cannot be an environment variable name/],
    ['KEY', '', /No value for KEY/],
    ['KEY', 'abc', /shorter than 6 characters/],
    ['KEY', 'line-one\nline-two', /spans several lines/],
  ])('refuses %s=%j without quoting it', (variable, value, message) => {
    expect(() => checkSecret(variable, value)).toThrow(message);
    if (value.length > 3) expect(() => checkSecret(variable, value)).not.toThrow(value);
  });
});
