import { describe, expect, it } from 'vitest';
import { parseAgentConfig } from '../../../../src/config/agent-config.js';
import { DEFAULT_BUILTIN_TOOLS, claudeCodeHarness, claudeProjectDirName, defaultAllowedTools, parseClaudeCodeLine } from '../../../../src/runner/harnesses/claude-code.js';
import type { HarnessSetup } from '../../../../src/runner/harnesses/harness.js';

function setup(runner: Record<string, unknown> = {}, top: Record<string, unknown> = {}): HarnessSetup {
  const config = parseAgentConfig({ ...top, runner });
  return {
    instanceName: 'scout',
    dataDir: '/srv/agents/scout',
    cwd: '/home/op/.local/state/agent-kernel/instances/scout/private/harness',
    tick: 7,
    sessionId: '6a1f1d8e-1111-4222-8333-444455556666',
    prompt: 'hello',
    home: '/home/op/.local/state/agent-kernel/instances/scout/private/harness-home',
    workDir: '/home/op/.local/state/agent-kernel/instances/scout/private/tick-007/attempt-1',
    mcpServer: { command: '/usr/bin/node', args: ['/pkg/dist/cli/agent-kernel.js', 'serve', '/srv/agents/scout'], env: { AGENT_KERNEL_STATE_DIR: '/s' } },
    settingsFile: '/home/op/.local/state/agent-kernel/instances/scout/private/tick-007/attempt-1/settings.json',
    config: config.runner,
    model: config.runner.model ?? config.model,
    env: { PATH: '/usr/bin' },
  };
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
}

describe('claude-code invocation', () => {
  it('runs print mode with stream-json both ways, our MCP config only, the session id and hooks', () => {
    const { command, args, cwd, interactiveStdin } = claudeCodeHarness.invocation(setup());
    expect(command).toBe('claude');
    // Not the data repo: Claude Code would load the CLAUDE.md the agent wrote there (and the host files it imports).
    expect(cwd).toBe('/home/op/.local/state/agent-kernel/instances/scout/private/harness');
    expect(interactiveStdin).toBe(true);
    expect(args.slice(0, 7)).toEqual(['-p', '--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json', '--replay-user-messages']);
    expect(flag(args, '--mcp-config')).toBe('/home/op/.local/state/agent-kernel/instances/scout/private/tick-007/attempt-1/mcp-config.json');
    expect(args).toContain('--strict-mcp-config');
    expect(flag(args, '--session-id')).toBe('6a1f1d8e-1111-4222-8333-444455556666');
    expect(flag(args, '--settings')).toBe('/home/op/.local/state/agent-kernel/instances/scout/private/tick-007/attempt-1/settings.json');
    expect(flag(args, '--permission-mode')).toBe('acceptEdits');
    expect(args).not.toContain('hello');
  });

  it('offers no built-in tool that touches host files, processes or the network by default, and allows our five', () => {
    const { args } = claudeCodeHarness.invocation(setup());
    const offered = flag(args, '--tools')?.split(',') ?? [];
    expect(offered).toEqual(DEFAULT_BUILTIN_TOOLS);
    for (const tool of ['Bash', 'Read', 'Write', 'Edit', 'NotebookEdit', 'Glob', 'Grep', 'WebFetch', 'WebSearch', 'Skill', 'Task', 'EnterWorktree']) expect(offered).not.toContain(tool);
    expect(flag(args, '--disallowedTools')).toBe('Bash');
    expect(flag(args, '--allowedTools')?.split(',')).toEqual(defaultAllowedTools());
    expect(defaultAllowedTools()).toEqual(['login', 'open', 'type', 'wait', 'close'].map((t) => `mcp__agent-kernel__${t}`));
  });

  it("gives the built-in tools the operator's file names", () => {
    const { args } = claudeCodeHarness.invocation(setup({ builtin_tools: ['Read', 'TaskCreate'], allowed_tools: ['Read(//srv/agents/scout/**)'] }));
    expect(flag(args, '--tools')).toBe('Read,TaskCreate');
    expect(flag(args, '--allowedTools')).toBe('Read(//srv/agents/scout/**)');
  });

  it('passes the model, tool rules, system prompt and limits from agent_config.json', () => {
    const { args, command } = claudeCodeHarness.invocation(
      setup(
        { command: '/opt/claude', allowed_tools: ['Read'], disallowed_tools: ['Bash', 'WebFetch'], append_system_prompt: 'Be brief.', max_turns: 30, max_budget_usd: 2.5 },
        { model: 'claude-opus-4-8' },
      ),
    );
    expect(command).toBe('/opt/claude');
    expect(flag(args, '--model')).toBe('claude-opus-4-8');
    expect(flag(args, '--allowedTools')).toBe('Read');
    expect(flag(args, '--disallowedTools')).toBe('Bash,WebFetch');
    expect(flag(args, '--append-system-prompt')).toBe('Be brief.');
    expect(flag(args, '--max-turns')).toBe('30');
    expect(flag(args, '--max-budget-usd')).toBe('2.5');
  });

  it('knows where Claude Code keeps its session transcript', () => {
    expect(claudeProjectDirName('/tmp/ccx')).toBe('-tmp-ccx');
    expect(claudeProjectDirName('/srv/a_b.c')).toBe('-srv-a-b-c');
    expect(claudeCodeHarness.sessionTranscriptPath?.(setup(), { CLAUDE_CONFIG_DIR: '/cfg' })).toBe(
      '/cfg/projects/-home-op--local-state-agent-kernel-instances-scout-private-harness/6a1f1d8e-1111-4222-8333-444455556666.jsonl',
    );
    expect(claudeCodeHarness.sessionTranscriptPath?.(setup(), { HOME: '/home/u' })).toMatch(/^\/home\/u\/\.claude\/projects\//);
  });

  it('encodes user messages and MCP status requests as stream-json lines', () => {
    expect(JSON.parse(claudeCodeHarness.encodeUserMessage!('hi'))).toMatchObject({ type: 'user', message: { role: 'user', content: 'hi' } });
    // Tagged, so that the echo (--replay-user-messages) says which message Claude Code took.
    expect(JSON.parse(claudeCodeHarness.encodeUserMessage!('hi', 'u-1'))).toMatchObject({ type: 'user', uuid: 'u-1' });
    expect(JSON.parse(claudeCodeHarness.encodeMcpStatusRequest!('r1'))).toEqual({ type: 'control_request', request_id: 'r1', request: { subtype: 'mcp_status' } });
  });
});

describe('parseClaudeCodeLine (lines as Claude Code 2.1.197 prints them)', () => {
  it('reads system/init with the MCP server status and tools', () => {
    const line = JSON.stringify({
      type: 'system',
      subtype: 'init',
      session_id: 's',
      model: 'claude-opus-4-8[1m]',
      tools: ['Read', 'mcp__agent-kernel__login'],
      mcp_servers: [{ name: 'agent-kernel', status: 'connected' }],
    });
    expect(parseClaudeCodeLine(line)).toEqual([
      { type: 'init', sessionId: 's', model: 'claude-opus-4-8[1m]', mcpServers: [{ name: 'agent-kernel', status: 'connected' }], tools: ['Read', 'mcp__agent-kernel__login'] },
    ]);
  });

  it('reads the answer to an MCP status request', () => {
    const line = JSON.stringify({
      type: 'control_response',
      response: { subtype: 'success', request_id: 'r1', response: { mcpServers: [{ name: 'agent-kernel', status: 'pending', config: {} }] } },
    });
    expect(parseClaudeCodeLine(line)).toEqual([{ type: 'mcp-status', requestId: 'r1', servers: [{ name: 'agent-kernel', status: 'pending' }] }]);
  });

  it('reads assistant messages: thread, usage, text, error', () => {
    const line = JSON.stringify({
      type: 'assistant',
      message: { model: '<synthetic>', content: [{ type: 'text', text: 'Not logged in · Please run /login' }], usage: { input_tokens: 0 } },
      parent_tool_use_id: null,
      error: 'authentication_failed',
    });
    expect(parseClaudeCodeLine(line)).toEqual([
      { type: 'assistant', mainThread: true, model: '<synthetic>', usage: { input_tokens: 0 }, text: 'Not logged in · Please run /login', error: 'authentication_failed' },
    ]);
    const sub = JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use' }] }, parent_tool_use_id: 'toolu_1' });
    expect(parseClaudeCodeLine(sub)[0]).toMatchObject({ type: 'assistant', mainThread: false, text: '' });
  });

  it('reads results with usage, cost and the context window', () => {
    const line = JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      api_error_status: null,
      result: 'done',
      total_cost_usd: 0.42,
      num_turns: 3,
      usage: { input_tokens: 10, output_tokens: 5 },
      modelUsage: { 'claude-sonnet-4-5': { contextWindow: 200000 } },
    });
    expect(parseClaudeCodeLine(line)).toEqual([
      { type: 'result', isError: false, subtype: 'success', text: 'done', apiErrorStatus: null, usage: { input_tokens: 10, output_tokens: 5 }, costUsd: 0.42, contextWindow: 200000, numTurns: 3 },
    ]);
  });

  it.each([
    [{ type: 'system', subtype: 'api_retry', attempt: 2, error_status: 529, error: 'server_error' }, { type: 'api-retry', status: 529, error: 'server_error', attempt: 2 }],
    [{ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: 1767225600 } }, { type: 'rate-limit', status: 'rejected', resetsAt: 1767225600 }],
    [{ type: 'system', subtype: 'status', status: 'compacting' }, { type: 'compacting' }],
    [{ type: 'system', subtype: 'compact_boundary' }, { type: 'compacting' }],
    [{ type: 'user', message: { content: [{ type: 'tool_result' }] } }, { type: 'tool-result' }],
    // As Claude Code 2.1.197 echoes a message it took from stdin (--replay-user-messages), logged in or not.
    [{ type: 'user', message: { role: 'user', content: 'hi' }, parent_tool_use_id: null, uuid: '11111111-2222-4333-8444-555555555555', isReplay: true }, { type: 'user-replay', uuid: '11111111-2222-4333-8444-555555555555' }],
  ])('reads %j', (event, expected) => {
    expect(parseClaudeCodeLine(JSON.stringify(event))).toEqual([expected]);
  });

  it.each(['not json', '[]', '{"type":"system","subtype":"hook_started"}', ''])('ignores %j', (line) => {
    expect(parseClaudeCodeLine(line)).toEqual([]);
  });
});
