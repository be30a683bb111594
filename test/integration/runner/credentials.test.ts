import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { access, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { instancePaths } from '../../../src/config/paths.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { removeEngineResources, TEST_IMAGE } from '../../helpers/test-instance.js';
import { KERNEL_RUNNER_BIN } from './tick-helpers.js';

// The real Claude Code (pinned), logged out in a home of its own; a container per tick.
vi.setConfig({ testTimeout: 240_000 });

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const AGENT_KERNEL_BIN = path.join(ROOT, 'dist', 'cli', 'agent-kernel.js');
const TOKEN = 'sk-ant-oat01-test-token-from-the-secrets-dir';

let home: string;
let env: NodeJS.ProcessEnv;
const name = `t-cred-${Math.random().toString(16).slice(2, 8)}`;
let dir: string;
let api: Server;
const apiRequests: { url: string; authorization: string | undefined }[] = [];

function run(bin: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [bin, ...args], { env, timeout: 240_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}

/** The row of `doctor` named `row`, with its fix lines. */
function doctorRow(stdout: string, row: string): string {
  const lines = stdout.split('\n');
  const start = lines.findIndex((line) => new RegExp(`^  \\S+\\s+${row}\\s`).test(line));
  if (start < 0) return '';
  const end = lines.findIndex((line, i) => i > start && /^ {2}\S/.test(line));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'ak-cred-'));
  env = {
    ...process.env,
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    AGENT_KERNEL_CONFIG_DIR: path.join(home, 'config'),
    AGENT_KERNEL_LOG_LEVEL: 'warn',
    // The pinned Claude Code as `claude`, as npm run setup puts it on PATH.
    PATH: `${path.join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
  };
  for (const variable of ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL']) delete env[variable];
  // A stand-in for the Anthropic API that refuses every token: what a revoked one gets.
  api = createServer((request, response) => {
    apiRequests.push({ url: request.url ?? '', authorization: request.headers.authorization });
    request.resume();
    response.writeHead(401, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  dir = path.join(home, 'agents', name);
  expect((await run(KERNEL_RUNNER_BIN, ['init', name, dir])).code).toBe(0);
  await writeFile(path.join(dir, 'system/container/Containerfile'), `FROM ${TEST_IMAGE}\n`);
  const operatorConfig = instancePaths(name, dir, env).operatorConfig;
  const port = (api.address() as AddressInfo).port;
  await writeFile(operatorConfig, JSON.stringify({ container: { network: 'none', base_images: [TEST_IMAGE] }, runner: { env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` }, retry: { max_attempts: 1 } } }));
});

afterAll(async () => {
  await removeEngineResources(name);
  await new Promise((resolve) => api.close(resolve));
  await rm(home, { recursive: true, force: true });
});

describeWithEngine('credentials for unattended ticks (the real Claude Code)', () => {
  it('doctor says Claude Code is logged out, exits 3, and names the commands that fix it', async () => {
    const doctor = await run(AGENT_KERNEL_BIN, ['doctor', name]);
    expect(doctor.code).toBe(3);
    const row = doctorRow(doctor.stdout, 'claude login');
    expect(row).toMatch(/^ {2}MISSING\s+claude login\s+Claude Code is logged out for t-cred-\w+'s ticks/);
    expect(row).toContain('fix: claude setup-token');
    expect(row).toContain(`kernel-runner secret set ${name} CLAUDE_CODE_OAUTH_TOKEN`);
    expect(doctorRow(doctor.stdout, 'ticks')).toMatch(/^ {2}ok\s+ticks\s+not paused/);
  });

  it('a token given with kernel-runner secret set reaches the tick; one the API refuses pauses the instance with the fix, and doctor shows PAUSED', async () => {
    const set = await run(KERNEL_RUNNER_BIN, ['secret', 'set', name, 'CLAUDE_CODE_OAUTH_TOKEN'], `${TOKEN}\n`);
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    const file = path.join(home, 'config', 'secrets', name, 'CLAUDE_CODE_OAUTH_TOKEN');
    expect(set.stdout).toContain(`Saved CLAUDE_CODE_OAUTH_TOKEN in ${file} (mode 0600)`);
    expect(set.stdout).not.toContain(TOKEN);
    expect(((await stat(file)).mode & 0o777).toString(8)).toBe('600');
    expect(((await stat(path.dirname(file))).mode & 0o777).toString(8)).toBe('700');
    expect(await readFile(file, 'utf8')).toBe(`${TOKEN}\n`);
    expect((await run(KERNEL_RUNNER_BIN, ['secret', 'ls', name])).stdout).toMatch(/^ {2}CLAUDE_CODE_OAUTH_TOKEN {3}set \d{4}-/m);

    const doctor = await run(AGENT_KERNEL_BIN, ['doctor', name]);
    expect(doctorRow(doctor.stdout, 'claude login')).toMatch(/^ {2}ok\s+claude login\s+logged in with CLAUDE_CODE_OAUTH_TOKEN from the secrets directory \(.*CLAUDE_CODE_OAUTH_TOKEN\)/);
    expect(doctor.stdout).not.toContain(TOKEN);

    const tick = await run(KERNEL_RUNNER_BIN, ['tick', name]);
    // Claude Code sent the secret to the API: `kernel-runner tick` gives the harness the secrets directory, as watch does.
    expect(apiRequests.filter((r) => r.url.startsWith('/v1/messages')).map((r) => r.authorization)).toContain(`Bearer ${TOKEN}`);
    expect(tick.code).toBe(3);
    expect(tick.stdout).toContain(`${name} tick 1: failed (fatal)`);
    expect(tick.stdout).toContain(`${name} is paused: no tick runs until it is resumed. To fix it:\n  claude setup-token`);
    expect(tick.stdout).toContain(`  kernel-runner resume ${name}\n`);
    expect(`${tick.stdout}${tick.stderr}`).not.toContain(TOKEN);
    await access(path.join(dir, 'system', 'paused'));

    const paused = await run(AGENT_KERNEL_BIN, ['doctor', name]);
    expect(paused.code).toBe(3);
    const row = doctorRow(paused.stdout, 'ticks');
    expect(row).toMatch(/^ {2}PAUSED\s+ticks\s+paused by tick 1 \(.*\): the model never ran: Claude Code has no credentials \(it said: "Not logged in"\)/);
    expect(row).toContain(`kernel-runner resume ${name}`);

    // Resume: here Claude Code has a token (the API refused it, which only a model call can tell), so it goes through.
    const resumed = await run(KERNEL_RUNNER_BIN, ['resume', name]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`Resumed ${name} (it was paused: the model never ran: Claude Code has no credentials`);
    await expect(access(path.join(dir, 'system', 'paused'))).rejects.toThrow();
  });

  it('resume refuses while Claude Code has no credentials, and --force resumes anyway', async () => {
    expect((await run(KERNEL_RUNNER_BIN, ['secret', 'rm', name, 'CLAUDE_CODE_OAUTH_TOKEN'])).stdout).toContain('Removed CLAUDE_CODE_OAUTH_TOKEN');
    await mkdir(path.join(dir, 'system'), { recursive: true });
    await writeFile(path.join(dir, 'system', 'paused'), 'Not logged in · Please run /login\n');
    const refused = await run(KERNEL_RUNNER_BIN, ['resume', name]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`${name} stays paused: Claude Code is logged out`);
    expect(refused.stderr).toContain(`kernel-runner secret set ${name} CLAUDE_CODE_OAUTH_TOKEN`);
    await access(path.join(dir, 'system', 'paused'));
    expect((await run(KERNEL_RUNNER_BIN, ['resume', name, '--force'])).code).toBe(0);
    await expect(access(path.join(dir, 'system', 'paused'))).rejects.toThrow();
  });
});
