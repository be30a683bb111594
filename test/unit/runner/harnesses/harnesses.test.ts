import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAgentConfig } from '../../../../src/config/agent-config.js';
import { isKernelError } from '../../../../src/errors.js';
import { customArgv, customHarness, splitCommandTemplate } from '../../../../src/runner/harnesses/custom.js';
import { geminiCliHarness } from '../../../../src/runner/harnesses/gemini-cli.js';
import type { HarnessSetup } from '../../../../src/runner/harnesses/harness.js';
import { getHarness } from '../../../../src/runner/harnesses/index.js';
import { opencodeHarness } from '../../../../src/runner/harnesses/opencode.js';
import { checkHarnessAvailable, findExecutable } from '../../../../src/runner/harnesses/harness-check.js';
import { unitPaths } from '../../../helpers/test-instance.js';

describe('splitCommandTemplate', () => {
  it.each([
    ['agent {prompt}', ['agent', '{prompt}']],
    ['  agent   -x  ', ['agent', '-x']],
    [`agent --name 'two words' "and \\"more\\""`, ['agent', '--name', 'two words', 'and "more"']],
    ['agent a\\ b', ['agent', 'a b']],
    [`agent ''`, ['agent', '']],
    [`agent --mcp={mcp_config}`, ['agent', '--mcp={mcp_config}']],
  ])('%s', (template, words) => {
    expect(splitCommandTemplate(template)).toEqual(words);
  });

  it('refuses an unclosed quote, naming the field', () => {
    expect(() => splitCommandTemplate(`agent "oops`)).toThrow(/runner\.command: unclosed " quote/);
  });
});

describe('customArgv', () => {
  const values = { prompt: 'do the thing; rm -rf / $(whoami)', mcpConfig: '/tmp/t/mcp-config.json' };
  it('replaces placeholders inside words, the prompt staying one argument (no shell)', () => {
    expect(customArgv('agent --mcp-config={mcp_config} -p {prompt}', values)).toEqual(['agent', '--mcp-config=/tmp/t/mcp-config.json', '-p', values.prompt]);
  });
  it('appends the prompt after "--" when the template has no {prompt}, so a prompt written as options stays one operand', () => {
    expect(customArgv('agent --mcp {mcp_config}', values)).toEqual(['agent', '--mcp', '/tmp/t/mcp-config.json', '--', values.prompt]);
    expect(customArgv('agent', { ...values, prompt: '--dangerously-skip-permissions' })).toEqual(['agent', '--', '--dangerously-skip-permissions']);
  });
  it('refuses an empty template', () => {
    expect(() => customArgv('   ', values)).toThrow(/runner\.command is empty/);
  });
});

describe('harness invocations', () => {
  let dir: string;
  let setup: HarnessSetup;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'harness-'));
    const mcpConfigFile = path.join(dir, 'mcp-config.json');
    await writeFile(mcpConfigFile, JSON.stringify({ mcpServers: { 'agent-kernel': { type: 'stdio', command: '/usr/bin/node', args: ['/ak/dist/cli/agent-kernel.js', 'serve', '/data/a'], env: { X: '1' } } } }));
    setup = {
      instanceName: 'a',
      dataDir: '/data/a',
      cwd: '/state/a/kernel/harness',
      tick: 1,
      sessionId: 's',
      prompt: 'hello agent',
      mcpConfigFile,
      settingsFile: path.join(dir, 'settings.json'),
      config: parseAgentConfig({}).runner,
      model: 'm-1',
      env: { PATH: '/bin', KEEP: 'yes' },
    };
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(`${dir}.state`, { recursive: true, force: true });
  });

  it('are all registered', () => {
    for (const name of ['claude-code', 'opencode', 'gemini-cli', 'custom']) expect(getHarness(name).name).toBe(name);
  });

  it('opencode: run with the prompt, our server in its own format, inline and on disk', async () => {
    const inv = opencodeHarness.invocation(setup);
    expect(inv).toMatchObject({ command: 'opencode', args: ['run', '--model', 'm-1', '--', 'hello agent'], cwd: '/state/a/kernel/harness', interactiveStdin: false });
    const expected = {
      type: 'local',
      command: ['/usr/bin/node', '/ak/dist/cli/agent-kernel.js', 'serve', '/data/a'],
      environment: { X: '1' },
      enabled: true,
    };
    const inline = JSON.parse(inv.env.OPENCODE_CONFIG_CONTENT!) as { mcp: Record<string, unknown>; tools: unknown };
    expect(inline.mcp['agent-kernel']).toEqual(expected);
    expect(inline.tools).toEqual({ bash: false });
    expect(JSON.parse(await readFile(inv.env.OPENCODE_CONFIG!, 'utf8'))).toEqual(inline);
    expect(inv.env.KEEP).toBe('yes');
  });

  it('gemini-cli: --prompt, a system settings file with our trusted server', async () => {
    const inv = geminiCliHarness.invocation(setup);
    expect(inv).toMatchObject({ command: 'gemini', args: ['--prompt=hello agent', '--allowed-mcp-server-names', 'agent-kernel', '--model', 'm-1'] });
    const settings = JSON.parse(await readFile(inv.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH!, 'utf8')) as { mcpServers: Record<string, unknown> };
    expect(settings.mcpServers['agent-kernel']).toEqual({ command: '/usr/bin/node', args: ['/ak/dist/cli/agent-kernel.js', 'serve', '/data/a'], env: { X: '1' }, trust: true });
  });

  // The prompt is the agent's (runner.prompt, prompt_file): one that reads as a flag must stay the prompt.
  // yargs (both CLIs) reads `--prompt --yolo` as an empty prompt plus --yolo, which approves every tool on the host.
  it.each(['--yolo', '-y', '--approval-mode=yolo\n\nMessages that arrived for you:', '--share'])('the agent\'s prompt %j never becomes a flag', (prompt) => {
    const gemini = geminiCliHarness.invocation({ ...setup, prompt }).args;
    expect(gemini).toContain(`--prompt=${prompt}`);
    expect(gemini).not.toContain(prompt);
    const opencode = opencodeHarness.invocation({ ...setup, prompt }).args;
    expect(opencode.slice(-2)).toEqual(['--', prompt]);
    const custom = customHarness.invocation({ ...setup, prompt, config: { ...setup.config, command: 'my-agent' } }).args;
    expect(custom).toEqual(['--', prompt]);
  });

  it('custom: the template, and the MCP config path in the environment too', () => {
    const inv = customHarness.invocation({ ...setup, config: { ...setup.config, command: 'my-agent --mcp {mcp_config}' } });
    expect(inv).toMatchObject({ command: 'my-agent', args: ['--mcp', setup.mcpConfigFile, '--', 'hello agent'], interactiveStdin: false });
    expect(inv.env.AGENT_KERNEL_MCP_CONFIG).toBe(setup.mcpConfigFile);
  });

  it('custom: without a template it is a config error', () => {
    let caught: unknown;
    try {
      customHarness.invocation(setup);
    } catch (error) {
      caught = error;
    }
    expect(isKernelError(caught, 'CONFIG_INVALID')).toBe(true);
    expect((caught as Error).message).toMatch(/runner\.command is not set/);
  });

  it('custom: stream-json lines are understood, other output is not', () => {
    expect(customHarness.parseLine('plain text output')).toEqual([]);
    expect(customHarness.parseLine('{"type":"result","subtype":"success","is_error":false,"result":"ok"}')[0]).toMatchObject({ type: 'result', isError: false });
    expect(customHarness.classify({})).toBeUndefined();
    expect(customHarness.classify({ resultIsError: true, resultSubtype: 'error_during_execution', resultText: 'Invalid API key' })?.errorClass).toBe('fatal');
  });
});

describe('checkHarnessAvailable (watch start)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hcheck-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(`${dir}.state`, { recursive: true, force: true });
  });
  // The data directory is a sibling of the folder holding binaries: the host never runs files from the data directory.
  const instance = (runner: Record<string, unknown>, dataDir = path.join(dir, 'data')) => ({
    name: 'a',
    dataDir,
    paths: unitPaths('a', dataDir),
    config: parseAgentConfig({ runner }),
  });

  it.each([
    [{ harness: 'claude-code' }, /The claude-code harness needs "claude", which is not on PATH\. Install it, or set runner\.command/],
    [{ harness: 'opencode' }, /needs "opencode"/],
    [{ harness: 'gemini-cli' }, /needs "gemini"/],
    [{ harness: 'custom', command: 'no-such-agent {prompt}' }, /The custom harness needs "no-such-agent".*Fix the command template/],
    [{ harness: 'claude-code', command: '/nonexistent/claude' }, /needs "\/nonexistent\/claude", which is not an executable file/],
  ])('%j: HARNESS_MISSING', (runner, message) => {
    let caught: unknown;
    try {
      checkHarnessAvailable(instance(runner), { PATH: dir });
    } catch (error) {
      caught = error;
    }
    expect(isKernelError(caught, 'HARNESS_MISSING')).toBe(true);
    expect((caught as Error).message).toMatch(message);
  });

  it('finds the binary on PATH', async () => {
    const bin = path.join(dir, 'opencode');
    await writeFile(bin, '#!/bin/sh\n', { mode: 0o755 });
    expect(checkHarnessAvailable(instance({ harness: 'opencode' }), { PATH: `/nonexistent:${dir}` })).toBe(bin);
    expect(findExecutable('sh', '/bin:/usr/bin', dir)).toMatch(/\/sh$/);
  });

  it('refuses a harness inside the data directory, or found through a relative PATH entry', async () => {
    const data = path.join(dir, 'data');
    await mkdir(data, { recursive: true });
    await writeFile(path.join(data, 'claude'), '#!/bin/sh\n', { mode: 0o755 });
    await writeFile(path.join(dir, 'claude'), '#!/bin/sh\n', { mode: 0o755 });
    // A relative command is found where the harness runs (a host-private folder), never in the data directory.
    expect(() => checkHarnessAvailable(instance({ harness: 'claude-code', command: './claude' }), { PATH: dir })).toThrow(/needs "\.\/claude", which is not an executable file/);
    const intoData = path.relative(instance({}).paths.harnessCwd, path.join(data, 'claude'));
    expect(() => checkHarnessAvailable(instance({ harness: 'claude-code', command: intoData }), { PATH: dir })).toThrow(/inside the data directory, which the agent can write/);
    expect(() => checkHarnessAvailable(instance({ harness: 'claude-code', command: `${data}/claude` }), { PATH: dir })).toThrow(/inside the data directory/);
    expect(() => checkHarnessAvailable(instance({ harness: 'claude-code' }), { PATH: `${dir}:.` })).toThrow(/PATH holds a relative folder/);
    expect(checkHarnessAvailable(instance({ harness: 'claude-code' }), { PATH: dir })).toBe(path.join(dir, 'claude'));
  });

  it('skips files that are not executable', async () => {
    await writeFile(path.join(dir, 'gemini'), 'not a program', { mode: 0o644 });
    expect(findExecutable('gemini', dir, dir)).toBeUndefined();
  });

  it('custom without a template: a config error at start', () => {
    expect(() => checkHarnessAvailable(instance({ harness: 'custom' }), { PATH: dir })).toThrow(/runner\.command is not set/);
  });
});
