import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What the README tells a person to run to give Claude Code our server, with the real Claude
 * Code 2.1.197 CLI (a home of its own): added for the user, it is there in every folder; and a
 * server that cannot start (no such instance) puts our reason where Claude Code shows it.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLAUDE = path.join(ROOT, 'node_modules', '.bin', 'claude');
const AGENT_KERNEL = path.join(ROOT, 'dist', 'cli', 'agent-kernel.js');
let home: string;
let env: NodeJS.ProcessEnv;

function run(command: string, args: string[], cwd: string) {
  const ran = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 120_000 });
  return { code: ran.status, out: `${ran.stdout}${ran.stderr}` };
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'ak-mcp-add-'));
  env = { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: path.join(home, '.claude'), AGENT_KERNEL_CONFIG_DIR: path.join(home, 'config'), AGENT_KERNEL_STATE_DIR: path.join(home, 'state') };
  delete env.ANTHROPIC_API_KEY;
  delete env.CLAUDE_CODE_OAUTH_TOKEN;
  for (const dir of ['here', 'elsewhere']) await mkdir(path.join(home, dir));
  expect(run(process.execPath, [path.join(ROOT, 'dist', 'cli', 'kernel-runner.js'), 'init', 'mcpdemo', path.join(home, 'mcpdemo')], home).code).toBe(0);
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('claude mcp add, as the README says', () => {
  it('--scope user: connected from another folder too', () => {
    const added = run(CLAUDE, ['mcp', 'add', '--scope', 'user', 'agent-kernel', '--', process.execPath, AGENT_KERNEL, 'serve', 'mcpdemo'], path.join(home, 'here'));
    expect(added.code, added.out).toBe(0);
    const listed = run(CLAUDE, ['mcp', 'list'], path.join(home, 'elsewhere'));
    expect(listed.out).toMatch(/agent-kernel: .* serve mcpdemo - ✔ Connected/);
  });

  it('a missing instance: our reason and its fix on stderr, which Claude Code shows in its debug output', () => {
    const added = run(CLAUDE, ['mcp', 'add', '--scope', 'user', 'ak-missing', '--', process.execPath, AGENT_KERNEL, 'serve', 'no-such-instance'], home);
    expect(added.code, added.out).toBe(0);
    const debug = path.join(home, 'claude-mcp.log');
    const listed = run(CLAUDE, ['--debug-file', debug, 'mcp', 'list'], path.join(home, 'elsewhere'));
    expect(listed.out).toMatch(/ak-missing: .* - ✘ Failed to connect/);
    expect(readFileSync(debug, 'utf8')).toContain('MCP server "ak-missing" Server stderr: agent-kernel serve: No instance named "no-such-instance". Create one with: kernel-runner init no-such-instance <dir>');
  });
});
