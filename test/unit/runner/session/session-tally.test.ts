import { describe, expect, it } from 'vitest';
import { claudeCodeHarness, parseClaudeCodeLine } from '../../../../src/runner/harnesses/claude-code.js';
import type { HarnessEvent } from '../../../../src/runner/harnesses/harness.js';
import { sessionResult } from '../../../../src/runner/session/session-result.js';
import { emptyTally, tallyEvent, tallyEvents } from '../../../../src/runner/session/session-tally.js';

const result = (fields: Partial<Extract<HarnessEvent, { type: 'result' }>> = {}): HarnessEvent => ({ type: 'result', isError: false, subtype: 'success', text: 'done', ...fields });
const assistant = (text: string, fields: Partial<Extract<HarnessEvent, { type: 'assistant' }>> = {}): HarnessEvent => ({ type: 'assistant', mainThread: true, text, ...fields });

describe('tallyEvents', () => {
  it.each<[string, HarnessEvent[], Record<string, unknown>]>([
    ['nothing happened', [], { sawResult: false, toolCalls: 0, turns: 0, costUsd: 0, lastMessage: '' }],
    ['a tool result is one tool call', [{ type: 'tool-result' }, { type: 'tool-result' }], { toolCalls: 2 }],
    ['turns add up over results', [result({ numTurns: 3 }), result({ numTurns: 2 })], { turns: 5, sawResult: true }],
    ['a result without a turn count adds none', [result()], { turns: 0, sawResult: true }],
    ['the cost is the highest running total', [result({ costUsd: 0.5 }), result({ costUsd: 0.2 })], { costUsd: 0.5 }],
    ['the last main-thread text is the last message', [assistant('first'), assistant('from a sub-agent', { mainThread: false }), assistant('')], { lastMessage: 'first' }],
    ['init, MCP status and compaction count nothing', [{ type: 'init', mcpServers: [], tools: [] }, { type: 'mcp-status', requestId: 'x', servers: [] }, { type: 'compacting' }], { toolCalls: 0, turns: 0, sawResult: false }],
  ])('%s', (_what, events, expected) => {
    expect(tallyEvents(events)).toMatchObject(expected);
  });

  it('adds every token kind over results, and missing counts as zero', () => {
    const tally = tallyEvents([
      result({ usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000 } }),
      result({ usage: { input_tokens: 1, cache_read_input_tokens: 2 } }),
      result(),
    ]);
    expect(tally.tokens).toEqual({ input: 11, output: 5, cache_creation: 100, cache_read: 1002 });
  });

  it('does not change the tally it was given', () => {
    const start = emptyTally();
    tallyEvent(start, result({ usage: { input_tokens: 3 }, numTurns: 1 }));
    tallyEvent(start, { type: 'tool-result' });
    expect(start).toEqual(emptyTally());
  });

  it('keeps the error facts of the latest turn for classification; a rate-limit report outlives its turn', () => {
    const tally = tallyEvents([
      { type: 'api-retry', status: 529, error: 'overloaded' },
      { type: 'rate-limit', status: 'allowed_warning', resetsAt: 1_800_000_000 },
      assistant('API Error: 529', { error: 'server_error' }),
      result({ isError: true, subtype: 'error_during_execution', text: 'overloaded', apiErrorStatus: 529 }),
    ]);
    expect(tally.resultSignals).toEqual({
      lastRetry: { status: 529, error: 'overloaded' },
      rateLimit: { status: 'allowed_warning', resetsAt: 1_800_000_000_000 },
      assistantError: 'server_error',
      assistantText: 'API Error: 529',
      resultIsError: true,
      resultSubtype: 'error_during_execution',
      resultText: 'overloaded',
      apiErrorStatus: 529,
    });
    expect(tally.signals).toEqual({ rateLimit: { status: 'allowed_warning', resetsAt: 1_800_000_000_000 } });
  });

  it('counts a real Claude Code stream: tool calls, turns, tokens and cost', () => {
    const lines = [
      { type: 'system', subtype: 'init', session_id: 's', model: 'claude-sonnet-4-5', mcp_servers: [{ name: 'agent-kernel', status: 'connected' }], tools: [] },
      { type: 'assistant', parent_tool_use_id: null, message: { model: 'claude-sonnet-4-5', content: [{ type: 'tool_use', id: 't1', name: 'mcp__agent-kernel__login', input: {} }], usage: { input_tokens: 5 } } },
      { type: 'user', parent_tool_use_id: null, message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'Logged in' }] } },
      { type: 'assistant', parent_tool_use_id: null, message: { content: [{ type: 'text', text: 'All done.' }], usage: { input_tokens: 7 } } },
      { type: 'result', subtype: 'success', is_error: false, result: 'All done.', num_turns: 2, total_cost_usd: 0.03, usage: { input_tokens: 12, output_tokens: 40 } },
    ];
    const tally = tallyEvents(lines.flatMap((line) => parseClaudeCodeLine(JSON.stringify(line))));
    expect(tally).toMatchObject({ sawResult: true, toolCalls: 1, turns: 2, costUsd: 0.03, lastMessage: 'All done.', tokens: { input: 12, output: 40, cache_creation: 0, cache_read: 0 } });
    expect(claudeCodeHarness.classify(tally.resultSignals ?? tally.signals)).toBeUndefined();
  });
});

describe('sessionResult', () => {
  const base = { sessionId: 's', harness: claudeCodeHarness, exitCode: 1, context: { used: 0, window: 200_000, ratio: 0 }, stderrTail: '' };

  it('a harness that exits without a result is a harness error quoting its last stderr lines', () => {
    const out = sessionResult({ ...base, tally: emptyTally(), stderrTail: 'a\nb\nc\nError: not found\n' });
    expect(out.classification).toEqual({ errorClass: 'harness', reason: 'the harness exited (code 1) without a result: b | c | Error: not found' });
  });

  it('a session the runner ended is not classified, whatever the stream said', () => {
    const out = sessionResult({ ...base, tally: tallyEvents([result({ isError: true, apiErrorStatus: 401, text: 'Invalid API key' })]), endedBy: 'idle', endDetail: 'silent' });
    expect(out).toMatchObject({ endedBy: 'idle', endDetail: 'silent', sawResult: true });
    expect(out.classification).toBeUndefined();
  });

  it('a successful result with counts carries them', () => {
    const out = sessionResult({ ...base, exitCode: 0, tally: tallyEvents([{ type: 'tool-result' }, result({ numTurns: 4, costUsd: 1 })]) });
    expect(out).toMatchObject({ toolCalls: 1, turns: 4, costUsd: 1, sawResult: true, exitCode: 0 });
    expect(out.classification).toBeUndefined();
  });
});
