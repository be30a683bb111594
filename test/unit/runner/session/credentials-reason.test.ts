import { describe, expect, it } from 'vitest';
import { credentialsReason } from '../../../../src/runner/session/session-result.js';

describe('credentialsReason: a credentials error in our words, with the fix', () => {
  const fix = 'fix: claude setup-token, then kernel-runner secret set demo CLAUDE_CODE_OAUTH_TOKEN';
  it.each([
    ['Not logged in · Please run /login', `the model never ran: Claude Code has no credentials (it said: "Not logged in"); ${fix}`],
    // Claude Code ends a refused key with the same advice as a missing one: it is still a refusal.
    ['Invalid API key · Please run /login', `the model never ran: the model's API refused Claude Code's credentials (it said: "Invalid API key"); ${fix}`],
    ['Invalid API key · Fix external API key', `the model never ran: the model's API refused Claude Code's credentials (it said: "Invalid API key · Fix external API key"); ${fix}`],
    ['API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}', expect.stringMatching(/^the model never ran: the model's API refused Claude Code's credentials \(it said: "API Error: 401 .*"\); fix: claude setup-token/)],
  ])('%s', (said, expected) => {
    const reason = credentialsReason('claude-code', said, fix);
    expect(reason).toEqual(expected);
    expect(reason).not.toMatch(/\/login/);
  });

  it("keeps another cause in the harness's own words, then the fix", () => {
    expect(credentialsReason('opencode', 'ProviderModelNotFoundError: Model not found: x', 'HELP')).toBe('ProviderModelNotFoundError: Model not found: x. HELP');
  });
});
