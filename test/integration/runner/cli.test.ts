import { execFile, spawn } from 'node:child_process';
import { access, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { instancePaths } from '../../../src/config/paths.js';
import { removeEngineResources, TEST_IMAGE } from '../../helpers/test-instance.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { FAKE_CLAUDE, KERNEL_RUNNER_BIN } from './tick-helpers.js';

// Each test starts a container and a harness; on a loaded 2-core machine that can take a while.
vi.setConfig({ testTimeout: 240_000 });

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = KERNEL_RUNNER_BIN;

let home: string;
let env: NodeJS.ProcessEnv;

function runner(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env, timeout: 240_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Run the bin, noting how long it stays alive after its first stdout line (the tick summary). */
function runnerTimed(args: string[]): Promise<{ code: number | null; stdout: string; lingerMs: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    let summaryAt: number | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (summaryAt === undefined && stdout.includes('\n')) summaryAt = Date.now();
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, lingerMs: Date.now() - (summaryAt ?? Date.now()) }));
  });
}

beforeAll(async () => {
  await access(BIN);
  home = await mkdtemp(path.join(os.tmpdir(), 'ak-cli-'));
  env = { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: path.join(home, '.claude'), AGENT_KERNEL_CONFIG_DIR: path.join(home, 'config'), AGENT_KERNEL_LOG_LEVEL: 'warn' };
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('kernel-runner init and ls', () => {
  it('creates a data repo, registers it, and lists it', async () => {
    const dir = path.join(home, 'agents', 'scout');
    const init = await runner(['init', 'scout', dir]);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect(init.stdout).toContain(`Instance "scout" → ${dir}`);
    for (const rel of [
      'system/agent_config.json',
      'system/startup.json',
      'system/container/Containerfile',
      'system/hooks/pre-tick/README.md',
      'system/hooks/pre-stop/README.md',
      'system/hooks/post-tick/README.md',
      'inbox',
      '.gitignore',
      '.git',
    ]) {
      await access(path.join(dir, rel));
    }
    // What the host runs goes to the operator's file, out of the agent's reach; the agent's file only tunes.
    const operatorConfig = instancePaths('scout', dir, env).operatorConfig;
    expect(operatorConfig.startsWith(path.join(home, 'config'))).toBe(true);
    expect(JSON.parse(await readFile(operatorConfig, 'utf8'))).toMatchObject({ runner: { harness: 'claude-code' } });
    expect(JSON.parse(await readFile(path.join(dir, 'system/agent_config.json'), 'utf8'))).not.toHaveProperty('container');
    expect(init.stdout).toContain(`What the host runs (runner, container) is yours: ${operatorConfig}`);
    expect(init.stdout).toContain('set runner.push.remote there');
    expect(await readFile(path.join(dir, 'system/hooks/post-tick/README.md'), 'utf8')).toContain('runner.push.remote');
    expect(await readFile(path.join(dir, 'system/container/Containerfile'), 'utf8')).toBe(await readFile(path.join(ROOT, 'assets', 'Containerfile.default'), 'utf8'));
    expect(await readFile(path.join(dir, '.gitignore'), 'utf8')).toMatch(/^tmp\/$/m);
    const readme = await stat(path.join(dir, 'system/hooks/pre-tick/README.md'));
    expect(readme.mode & 0o111).toBe(0);
    expect(JSON.parse(await readFile(path.join(home, 'config', 'instances.json'), 'utf8')).instances.scout.dir).toBe(dir);

    // Again on the same repo: nothing is overwritten.
    await writeFile(path.join(dir, 'system/startup.json'), '{"terminals":[{"tty":0,"command":"htop"}]}\n');
    const again = await runner(['init', 'scout', dir]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing to create');
    expect(await readFile(path.join(dir, 'system/startup.json'), 'utf8')).toContain('htop');

    const ls = await runner(['ls']);
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/^NAME\s+DIR\s+STATE\s+LAST TICK$/m);
    expect(ls.stdout).toMatch(new RegExp(`^scout\\s+${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+ready\\s+-$`, 'm'));

    await writeFile(path.join(dir, 'system', 'paused'), 'Not logged in · Please run /login\n');
    expect((await runner(['ls'])).stdout).toContain('paused: Not logged in');
    const json = JSON.parse((await runner(['ls', '--json'])).stdout);
    expect(json).toEqual([expect.objectContaining({ name: 'scout', dir, paused: 'Not logged in · Please run /login' })]);
  });

  it.each(['../escape', 'a b', '..', 'x..y', 'semi;colon', '-dash-first-is-fine-but-slash/no'])('refuses the name %j', async (name) => {
    // After "--", so that a name starting with a dash reaches the name check rather than the flag parser.
    const result = await runner(['init', '--', name, path.join(home, 'bad')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is not allowed: use 1-64 of A-Z a-z 0-9 _ . - (no "..")');
  });

  it('refuses a data dir that is a file', async () => {
    const file = path.join(home, 'a-file');
    await writeFile(file, 'x');
    const result = await runner(['init', 'filed', file]);
    expect(result).toMatchObject({ code: 2, stderr: expect.stringContaining(`${file} exists and is not a directory`) });
  });

  it('refuses a name that is registered elsewhere', async () => {
    await runner(['init', 'twin', path.join(home, 'twin-a')]);
    const second = await runner(['init', 'twin', path.join(home, 'twin-b')]);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`already registered at ${path.join(home, 'twin-a')}`);
  });

  it('explains its usage', async () => {
    expect(await runner(['init', 'only-name'])).toMatchObject({ code: 2, stderr: expect.stringContaining('Usage: kernel-runner init <name> <dir>') });
    expect(await runner(['tick'])).toMatchObject({ code: 2, stderr: expect.stringContaining('Usage: kernel-runner tick <name-or-dir>') });
    expect(await runner(['tick', 'scout', '--mesage', 'hi'])).toMatchObject({ code: 2, stderr: expect.stringContaining('Unknown option --mesage. Usage: kernel-runner tick') });
    expect(await runner(['tick', 'nobody-here'])).toMatchObject({ code: 2, stderr: expect.stringContaining('No instance named "nobody-here"') });
  });
});

describeWithEngine('kernel-runner tick (the bin)', () => {
  const name = `t-cli-${Math.random().toString(16).slice(2, 8)}`;
  let dir: string;
  afterAll(async () => {
    await removeEngineResources(name);
  });

  it('prints a one-line summary and exits 0, then 3 once paused', async () => {
    dir = path.join(home, 'agents', name);
    expect((await runner(['init', name, dir])).code).toBe(0);
    // Network none: its builds have no network for apt-get, so the test image global-setup.ts built.
    await writeFile(path.join(dir, 'system/container/Containerfile'), `FROM ${TEST_IMAGE}\n`);
    const operatorConfig = instancePaths(name, dir, env).operatorConfig;
    await writeFile(operatorConfig, JSON.stringify({ container: { network: 'none', base_images: [TEST_IMAGE] }, runner: { command: FAKE_CLAUDE } }));

    const ok = await runner(['tick', name]);
    expect(ok.stderr).not.toMatch(/error/i);
    expect(ok.code).toBe(0);
    // The shell prompt comes back with the summary: no timer keeps the process alive after it.
    const again = await runnerTimed(['tick', name]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`${name} tick 2: ok`);
    expect(again.lingerMs).toBeLessThan(1500);
    expect(ok.stdout).toMatch(new RegExp(`^${name} tick 1: ok in \\d+s · [\\d,]+ tokens · \\$\\d+\\.\\d\\d · log ${instancePaths(name, dir).logs.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/tick-001\\.jsonl\\n$`));

    await writeFile(operatorConfig, JSON.stringify({ container: { network: 'none', base_images: [TEST_IMAGE] }, runner: { command: FAKE_CLAUDE, env: { FAKE_CLAUDE_SCENARIO: 'not-logged-in' } } }));
    const fatal = await runner(['tick', name]);
    expect(fatal.code).toBe(3);
    expect(fatal.stdout).toContain(`${name} tick 3: failed (fatal)`);
    expect(fatal.stdout).toContain('the model never ran: Claude Code has no credentials (it said: "Not logged in"); fix: claude setup-token');
    expect(fatal.stdout).not.toContain('/login');
    // The first failed tick names the commands that fix it, and how to resume.
    expect(fatal.stdout).toContain(`${name} is paused: no tick runs until it is resumed. To fix it:\n  claude setup-token`);
    expect(fatal.stdout).toContain(`  kernel-runner secret set ${name} CLAUDE_CODE_OAUTH_TOKEN   (paste the token)`);
    expect(fatal.stdout).toMatch(new RegExp(`  kernel-runner resume ${name}\\n$`));

    const refused = await runner(['tick', name]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`Instance "${name}" is paused: the model never ran: Claude Code has no credentials (it said: "Not logged in"); fix: claude setup-token, then kernel-runner secret set ${name} CLAUDE_CODE_OAUTH_TOKEN. Fix the cause (agent-kernel doctor ${name} shows how), then: kernel-runner resume ${name}`);

    const ls = await runner(['ls']);
    expect(ls.stdout).toMatch(new RegExp(`^${name}\\s.*paused: the model never ran: Claude Code has no credentials.*#3 failed \\(fatal\\) ended `, 'm'));
  });
});
