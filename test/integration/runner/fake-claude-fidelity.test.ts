import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAgentConfig } from '../../../src/config/agent-config.js';
import { claudeCodeHarness } from '../../../src/runner/harnesses/claude-code.js';
import { FAKE_CLAUDE, REAL_CLAUDE } from './tick-helpers.js';

/** The fake claude must refuse what the real CLI refuses, with the same words, and accept what the runner passes. */
describe('fake claude fidelity (against the pinned real CLI)', () => {
  let home: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'ak-fidelity-'));
    env = { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: path.join(home, '.claude') };
    delete env.ANTHROPIC_API_KEY;
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  function run(bin: string, args: string[]): Promise<{ code: number; stderr: string }> {
    return new Promise((resolve) => {
      const child = execFile(bin, args, { env, cwd: home, timeout: 60_000 }, (error, _stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr: stderr.trim() });
      });
      child.stdin?.end();
    });
  }

  it.each([
    ['an unknown option', ['-p', '--bogus', 'x']],
    ['stream-json without --verbose', ['-p', '--output-format', 'stream-json', 'x']],
    ['a bad output format', ['-p', '--output-format', 'xml', 'x']],
    ['a session id that is not a UUID', ['-p', '--output-format', 'stream-json', '--verbose', '--session-id', 'nope', 'x']],
  ])('refuses %s like the real CLI', async (_name, args) => {
    const [real, fake] = await Promise.all([run(REAL_CLAUDE, args), run(FAKE_CLAUDE, args)]);
    expect(real.stderr).not.toBe('');
    expect(fake).toEqual(real);
  });

  it('accepts every flag the runner passes, as the real CLI does', async () => {
    const mcpConfigFile = path.join(home, 'mcp.json');
    const settingsFile = path.join(home, 'settings.json');
    await writeFile(mcpConfigFile, JSON.stringify({ mcpServers: {} }));
    await writeFile(settingsFile, JSON.stringify({ hooks: {} }));
    const config = parseAgentConfig({ model: 'claude-sonnet-4-5', runner: { append_system_prompt: 'Be brief.', max_turns: 5, max_budget_usd: 1 } });
    const { args } = claudeCodeHarness.invocation({
      instanceName: 'x',
      dataDir: home,
      tick: 1,
      sessionId: '6a1f1d8e-1111-4222-8333-444455556666',
      prompt: 'hi',
      mcpConfigFile,
      settingsFile,
      config: config.runner,
      model: config.model,
      env,
    });
    for (const bin of [REAL_CLAUDE, FAKE_CLAUDE]) {
      const { stderr } = await run(bin, args);
      expect(stderr).not.toMatch(/unknown option|invalid|requires/i);
    }
  });
});
