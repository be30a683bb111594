import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAgentConfig } from '../../../src/config/agent-config.js';
import { DEFAULT_BUILTIN_TOOLS, claudeCodeHarness } from '../../../src/runner/harnesses/claude-code.js';
import type { HarnessSetup } from '../../../src/runner/harnesses/harness.js';
import { writeInvocationFiles } from '../../../src/runner/session/tick-files.js';
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

  async function runnerSetup(): Promise<HarnessSetup> {
    const settingsFile = path.join(home, 'settings.json');
    await writeFile(settingsFile, JSON.stringify({ hooks: {} }));
    const config = parseAgentConfig({ model: 'claude-sonnet-4-5', runner: { append_system_prompt: 'Be brief.', max_turns: 5, max_budget_usd: 1 } });
    return {
      instanceName: 'x',
      dataDir: path.join(home, 'data'),
      cwd: path.join(home, 'harness'),
      home: path.join(home, 'harness-home'),
      workDir: path.join(home, 'work'),
      tick: 1,
      sessionId: '6a1f1d8e-1111-4222-8333-444455556666',
      prompt: 'hi',
      mcpServer: { command: process.execPath, args: ['-e', ''], env: {} },
      settingsFile,
      config: config.runner,
      model: config.model,
      env,
    };
  }

  /** The harness's invocation, with the private files it names written. */
  async function invocation(setup: HarnessSetup) {
    const result = claudeCodeHarness.invocation(setup);
    await writeInvocationFiles(result.files);
    return result;
  }

  /** The first event a CLI prints when run as the runner runs it: its init, with the tools the model is offered. */
  async function initEvent(bin: string): Promise<{ cwd: string; tools: string[] }> {
    // Each run its own session: both CLIs keep a transcript under the same project folder.
    const { args, cwd, env: harnessEnv } = await invocation({ ...(await runnerSetup()), sessionId: randomUUID() });
    await mkdir(cwd, { recursive: true });
    const child = spawn(bin, args, { cwd, env: harnessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end(claudeCodeHarness.encodeUserMessage!('hi') + '\n');
    let out = '';
    const first = await new Promise<string>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
      });
      child.once('exit', () => resolve(out));
    });
    child.kill('SIGKILL');
    if (!first.startsWith('{')) throw new Error(`${bin} printed no init event: ${JSON.stringify(out)} ${stderr}`);
    return JSON.parse(first) as { cwd: string; tools: string[] };
  }

  it('offers the agent no built-in tool that reads or writes host files, runs host processes or reaches the network (the real CLI says which)', async () => {
    const [real, fake] = await Promise.all([initEvent(REAL_CLAUDE), initEvent(FAKE_CLAUDE)]);
    expect(real.cwd).toBe(path.join(home, 'harness'));
    expect(real.tools.length).toBeGreaterThan(0);
    for (const tool of real.tools) expect(DEFAULT_BUILTIN_TOOLS).toContain(tool);
    expect(fake.tools.sort()).toEqual(real.tools.sort());
  });

  /** The events a CLI prints, run as the runner runs it, given one tagged user message (logged out: no model turn). */
  async function events(bin: string, uuid: string): Promise<Array<Record<string, unknown>>> {
    const invocation = claudeCodeHarness.invocation({ ...(await runnerSetup()), sessionId: randomUUID() });
    await mkdir(invocation.cwd, { recursive: true });
    const child = spawn(bin, invocation.args, { cwd: invocation.cwd, env: invocation.env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(claudeCodeHarness.encodeUserMessage!('hi', uuid) + '\n');
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await new Promise((resolve) => child.once('exit', resolve));
    return out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  it('echoes a user message it takes, with the uuid it came with, before the (synthetic) answer, as the real CLI does', async () => {
    const uuid = randomUUID();
    const [real, fake] = await Promise.all([events(REAL_CLAUDE, uuid), events(FAKE_CLAUDE, uuid)]);
    const shape = (list: Array<Record<string, unknown>>) =>
      list.filter((e) => e.type !== 'system').map((e) => (e.type === 'user' ? { type: e.type, isReplay: e.isReplay, uuid: e.uuid, content: (e.message as { content: unknown }).content } : { type: e.type }));
    // The first thing after init, on both (what follows differs: the real CLI is logged out, the fake plays the model).
    expect(shape(real)[0]).toEqual({ type: 'user', isReplay: true, uuid, content: 'hi' });
    expect(shape(fake)[0]).toEqual(shape(real)[0]);
  });

  it('accepts every flag the runner passes, as the real CLI does', async () => {
    const { args } = await invocation(await runnerSetup());
    for (const bin of [REAL_CLAUDE, FAKE_CLAUDE]) {
      const { stderr } = await run(bin, args);
      expect(stderr).not.toMatch(/unknown option|invalid|requires/i);
    }
  });
});
