import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAgentConfig } from '../../../../src/config/agent-config.js';
import { isCodedError } from '../../../../src/errors.js';
import { customArgv, customHarness, splitCommandTemplate } from '../../../../src/runner/harnesses/custom.js';
import { codexConfig, codexHarness } from '../../../../src/runner/harnesses/codex.js';
import { GEMINI_TOOL_NAMES, geminiCliHarness, geminiSettings } from '../../../../src/runner/harnesses/gemini-cli.js';
import type { HarnessSetup } from '../../../../src/runner/harnesses/harness.js';
import { getHarness } from '../../../../src/runner/harnesses/index.js';
import { opencodeConfig, opencodeHarness } from '../../../../src/runner/harnesses/opencode.js';
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
  const server = { command: '/usr/bin/node', args: ['/ak/dist/cli/mcp-tap.js', '/state/a/private/tick-001/attempt-1/mcp-tap.jsonl', '--', '/usr/bin/node', '/ak/dist/cli/agent-kernel.js', 'serve', '/data/a'], env: { X: '1' } };
  const base = (runner: Record<string, unknown> = {}): HarnessSetup => ({
    instanceName: 'a',
    dataDir: '/data/a',
    cwd: '/state/a/private/harness',
    home: '/state/a/private/harness-home',
    workDir: '/state/a/private/tick-001/attempt-1',
    tick: 1,
    sessionId: 's',
    prompt: 'hello agent',
    mcpServer: server,
    settingsFile: '/state/a/private/tick-001/attempt-1/settings.json',
    config: parseAgentConfig({ runner }).runner,
    model: 'm-1',
    // The operator ran the runner from inside the data folder, with their own CLI configs pointed at.
    env: { PATH: '/bin', KEEP: 'yes', HOME: '/home/op', PWD: '/data/a', XDG_CONFIG_HOME: '/home/op/.config', OPENCODE_CONFIG: '/home/op/oc.json', CODEX_HOME: '/home/op/.codex', CLAUDE_CONFIG_DIR: '/home/op/.claude', GEMINI_CLI_SYSTEM_SETTINGS_PATH: '/etc/g.json' },
  });
  const setup = base();

  it('are all registered', () => {
    for (const name of ['claude-code', 'opencode', 'gemini-cli', 'codex', 'custom']) expect(getHarness(name).name).toBe(name);
  });

  // opencode takes its project (opencode.json, .opencode/ plugins that run as host JavaScript, AGENTS.md) from PWD.
  it.each(['opencode', 'gemini-cli', 'codex'])('%s: starts in the private folder with PWD there and a private home, none of the operator\'s config pointers', (name) => {
    const inv = getHarness(name).invocation(setup);
    expect(inv.cwd).toBe('/state/a/private/harness');
    expect(inv.env).toMatchObject({ PWD: '/state/a/private/harness', HOME: '/state/a/private/harness-home', XDG_CONFIG_HOME: '/state/a/private/harness-home/.config', TMPDIR: '/state/a/private/harness-home/tmp', KEEP: 'yes' });
    for (const pointer of ['OPENCODE_CONFIG', 'GEMINI_CLI_SYSTEM_SETTINGS_PATH']) expect(inv.env[pointer]).toBeUndefined();
    for (const value of Object.values(inv.env)) expect(String(value)).not.toMatch(/^\/home\/op|^\/data\/a$/);
    for (const file of inv.files) expect(file.path.startsWith('/state/a/private/')).toBe(true);
  });

  it('custom and claude-code: PWD is the private folder too (their HOME stays the operator\'s: the command is theirs, Claude Code\'s login is there)', () => {
    expect(customHarness.invocation({ ...setup, config: { ...setup.config, command: 'my-agent' } }).env).toMatchObject({ PWD: '/state/a/private/harness', HOME: '/home/op' });
    expect(getHarness('claude-code').invocation(setup)).toMatchObject({ cwd: '/state/a/private/harness', env: { PWD: '/state/a/private/harness', HOME: '/home/op' } });
  });

  it('opencode: run --format json in the private folder, our server and only our tools in the config it merges last', () => {
    const inv = opencodeHarness.invocation(setup);
    expect(inv).toMatchObject({ command: 'opencode', interactiveStdin: false });
    expect(inv.args).toEqual(['run', '--format', 'json', '--print-logs', '--log-level', 'WARN', '--pure', '--dir', '/state/a/private/harness', '--model', 'm-1', '--', 'hello agent']);
    expect(inv.env.OPENCODE_DISABLE_PROJECT_CONFIG).toBe('1');
    const config = JSON.parse(inv.env.OPENCODE_CONFIG_CONTENT!) as { mcp: Record<string, unknown>; permission: Record<string, string> };
    expect(config.mcp['agent-kernel']).toEqual({ type: 'local', command: [server.command, ...server.args], environment: { X: '1' }, enabled: true });
    expect(Object.entries(config.permission)).toEqual([
      ['*', 'deny'],
      ['agent-kernel_*', 'allow'],
    ]);
  });

  it("opencode: the operator's providers and tool rules, never over our server or tools (the last matching rule wins)", () => {
    const config = opencodeConfig(server, { provider: { local: { npm: '@ai-sdk/openai-compatible' } }, mcp: { 'agent-kernel': { command: ['evil'] } }, permission: { webfetch: 'allow', 'agent-kernel_*': 'deny' } });
    expect(config.provider).toEqual({ local: { npm: '@ai-sdk/openai-compatible' } });
    expect((config.mcp as Record<string, { command: string[] }>)['agent-kernel']!.command[0]).toBe(server.command);
    expect(Object.entries(config.permission as object)).toEqual([
      ['*', 'deny'],
      ['webfetch', 'allow'],
      ['agent-kernel_*', 'allow'],
    ]);
  });

  it('gemini-cli: stream-json, trusting only the private folder, settings in its private home with our trusted server and only our tools', () => {
    const inv = geminiCliHarness.invocation(setup);
    expect(inv).toMatchObject({ command: 'gemini', args: ['--output-format', 'stream-json', '--skip-trust', '--model', 'm-1', '--prompt=hello agent'] });
    expect(inv.files.map((f) => f.path)).toEqual(['/state/a/private/harness-home/.gemini/settings.json']);
    const settings = JSON.parse(inv.files[0]!.content) as Record<string, Record<string, unknown>>;
    expect(settings.mcpServers!['agent-kernel']).toEqual({ command: server.command, args: server.args, env: { X: '1' }, trust: true });
    expect(settings.tools!.core).toEqual(GEMINI_TOOL_NAMES);
    expect(GEMINI_TOOL_NAMES).toEqual(['mcp_agent-kernel_login', 'mcp_agent-kernel_open', 'mcp_agent-kernel_type', 'mcp_agent-kernel_wait', 'mcp_agent-kernel_close']);
    expect(settings.mcp!.allowed).toEqual(['agent-kernel']);
    expect(settings.general).toMatchObject({ enableAutoUpdate: false, maxAttempts: 3 });
  });

  it("gemini-cli: the operator's auth type and retries, never over our server or tools", () => {
    const settings = geminiSettings(server, { security: { auth: { selectedType: 'vertex-ai' } }, general: { maxAttempts: 5 }, tools: { core: ['google_web_search'] }, mcpServers: { 'agent-kernel': { command: 'evil' } } });
    expect(settings).toMatchObject({ security: { auth: { selectedType: 'vertex-ai' } }, general: { maxAttempts: 5, enableAutoUpdate: false } });
    expect((settings.mcpServers as Record<string, { command: string }>)['agent-kernel']!.command).toBe(server.command);
    expect((settings.tools as { core: string[] }).core).toEqual([...GEMINI_TOOL_NAMES, 'google_web_search']);
  });

  it('codex: exec --json in the private folder, a private CODEX_HOME whose config.toml has our server approved and its own tools off', () => {
    const inv = codexHarness.invocation(setup);
    expect(inv).toMatchObject({ command: 'codex', interactiveStdin: false });
    expect(inv.args).toEqual(['exec', '--json', '--skip-git-repo-check', '--ephemeral', '--cd', '/state/a/private/harness', '--model', 'm-1', '--', 'hello agent']);
    expect(inv.env.CODEX_HOME).toBe('/state/a/private/harness-home/.codex');
    expect(inv.files.map((f) => f.path)).toEqual(['/state/a/private/harness-home/.codex/config.toml']);
    const config = parseToml(inv.files[0]!.content) as Record<string, Record<string, unknown>>;
    expect(config.mcp_servers!['agent-kernel']).toEqual({ command: server.command, args: server.args, env: { X: '1' }, default_tools_approval_mode: 'approve', enabled: true });
    expect(config).toMatchObject({ approval_policy: 'never', web_search: 'disabled', agents: { enabled: false } });
    expect(config.features).toMatchObject({ shell_tool: false, unified_exec: false, view_image: false, apps: false, plugins: false, unbounded_connection_retries: false });
  });

  it("codex: the operator's provider and model, never over our server or approvals", () => {
    const config = codexConfig(server, { model_provider: 'local', model_providers: { local: { base_url: 'http://127.0.0.1:8000/v1', env_key: 'LOCAL_KEY' } }, approval_policy: 'on-request', mcp_servers: { 'agent-kernel': { command: 'evil' } } });
    expect(config).toMatchObject({ model_provider: 'local', approval_policy: 'never', model_providers: { local: { env_key: 'LOCAL_KEY' } } });
    expect((config.mcp_servers as Record<string, { command: string }>)['agent-kernel']!.command).toBe(server.command);
  });

  it('codex: with OpenAI as provider and neither CODEX_API_KEY nor a login, refuses before it starts; with either, or another provider, it does not', () => {
    expect(codexHarness.missingCredentials!({ ...setup, home: dir })).toMatch(/Codex CLI has no credentials/);
    expect(codexHarness.missingCredentials!({ ...setup, home: dir, env: { ...setup.env, CODEX_API_KEY: 'sk-x' } })).toBeUndefined();
    expect(codexHarness.missingCredentials!({ ...setup, home: dir, config: parseAgentConfig({ runner: { harness_config: { model_provider: 'local' } } }).runner })).toBeUndefined();
  });

  // The prompt is the agent's (runner.prompt, prompt_file): one that reads as a flag must stay the prompt.
  // yargs (gemini, opencode) reads `--prompt --yolo` as an empty prompt plus --yolo, which approves every tool on the host.
  it.each(['--yolo', '-y', '--approval-mode=yolo\n\nMessages that arrived for you:', '--share', '--dangerously-bypass-approvals-and-sandbox'])("the agent's prompt %j never becomes a flag", (prompt) => {
    const gemini = geminiCliHarness.invocation({ ...setup, prompt }).args;
    expect(gemini).toContain(`--prompt=${prompt}`);
    expect(gemini).not.toContain(prompt);
    expect(opencodeHarness.invocation({ ...setup, prompt }).args.slice(-2)).toEqual(['--', prompt]);
    expect(codexHarness.invocation({ ...setup, prompt }).args.slice(-2)).toEqual(['--', prompt]);
    const custom = customHarness.invocation({ ...setup, prompt, config: { ...setup.config, command: 'my-agent' } }).args;
    expect(custom).toEqual(['--', prompt]);
  });

  it('custom: the template, and the MCP config file (Claude Code\'s format) in the environment too', () => {
    const inv = customHarness.invocation({ ...setup, config: { ...setup.config, command: 'my-agent --mcp {mcp_config}' } });
    const file = '/state/a/private/tick-001/attempt-1/mcp-config.json';
    expect(inv).toMatchObject({ command: 'my-agent', args: ['--mcp', file, '--', 'hello agent'], interactiveStdin: false });
    expect(inv.env.AGENT_KERNEL_MCP_CONFIG).toBe(file);
    expect(JSON.parse(inv.files[0]!.content)).toEqual({ mcpServers: { 'agent-kernel': { type: 'stdio', ...server } } });
  });

  it('custom: without a template it is a config error', () => {
    let caught: unknown;
    try {
      customHarness.invocation(setup);
    } catch (error) {
      caught = error;
    }
    expect(isCodedError(caught, 'CONFIG_INVALID')).toBe(true);
    expect((caught as Error).message).toMatch(/runner\.command is not set/);
  });

  it('custom: stream-json lines are understood, other output is not', () => {
    expect(customHarness.parseLine('plain text output')).toEqual([]);
    expect(customHarness.parseLine('{"type":"result","subtype":"success","is_error":false,"result":"ok"}')[0]).toMatchObject({ type: 'result', isError: false });
    expect(customHarness.classify({})).toBeUndefined();
    expect(customHarness.classify({ resultIsError: true, resultSubtype: 'error_during_execution', resultText: 'Invalid API key' })?.errorClass).toBe('fatal');
  });

  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'harness-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
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
    expect(isCodedError(caught, 'HARNESS_MISSING')).toBe(true);
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
