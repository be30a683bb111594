import { describe, expect, it } from 'vitest';
import { codexHarness } from '../../../../src/runner/harnesses/codex.js';
import { geminiCliHarness } from '../../../../src/runner/harnesses/gemini-cli.js';
import type { Harness } from '../../../../src/runner/harnesses/harness.js';
import { opencodeHarness, opencodeLoggedCause } from '../../../../src/runner/harnesses/opencode.js';
import { type EndReason, sessionResult } from '../../../../src/runner/session/session-result.js';
import { tallyEvents } from '../../../../src/runner/session/session-tally.js';

/**
 * What each pinned CLI really printed (captured here from the real binaries, trimmed to the
 * lines that matter), through the same parse → tally → result path a tick takes.
 */
function outcome(harness: Harness, stdout: string[], options: { exitCode?: number | null; stderr?: string; endedBy?: EndReason } = {}) {
  const tally = tallyEvents(stdout.flatMap((line) => harness.parseLine(line)));
  return sessionResult({
    sessionId: 's',
    harness,
    tally,
    endedBy: options.endedBy,
    endDetail: options.endedBy ? 'the harness was silent for 900 s (runner.idle_timeout)' : undefined,
    exitCode: options.exitCode ?? 0,
    context: { used: 0, window: 200_000, ratio: 0 },
    stderrTail: options.stderr ?? '',
    credentialsHelp: 'HELP',
  });
}

describe('opencode 1.18.33 (run --format json)', () => {
  const ok = [
    '{"type":"step_start","timestamp":1795740726692,"sessionID":"ses_1","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_1","type":"step-start"}}',
    '{"type":"tool_use","timestamp":1795740726873,"sessionID":"ses_1","part":{"type":"tool","tool":"agent-kernel_login","callID":"call_fake_2","state":{"status":"completed","input":{},"output":"login ok","metadata":{"truncated":false},"title":"","time":{"start":1,"end":2}},"id":"prt_2","sessionID":"ses_1","messageID":"msg_1"}}',
    '{"type":"step_finish","timestamp":1795740726873,"sessionID":"ses_1","part":{"id":"prt_3","reason":"tool-calls","messageID":"msg_1","sessionID":"ses_1","type":"step-finish","tokens":{"total":110,"input":100,"output":10,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}}',
    '{"type":"text","timestamp":1795740727060,"sessionID":"ses_1","part":{"id":"prt_4","messageID":"msg_2","sessionID":"ses_1","type":"text","text":"FAKE-MODEL-DONE login ok","time":{"start":1,"end":2}}}',
    '{"type":"step_finish","timestamp":1795740727060,"sessionID":"ses_1","part":{"id":"prt_5","reason":"stop","messageID":"msg_2","sessionID":"ses_1","type":"step-finish","tokens":{"total":110,"input":100,"output":10,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.0021}}',
  ];

  it('a session that worked: its last text, the tool call, tokens and cost of every step', () => {
    const result = outcome(opencodeHarness, ok);
    expect(result.classification).toBeUndefined();
    expect(result).toMatchObject({ lastMessage: 'FAKE-MODEL-DONE login ok', toolCalls: 1, tokens: { input: 200, output: 20 }, costUsd: 0.0021 });
  });

  it('an unreachable model (it retried for a minute, then said so) is transient', () => {
    const line = '{"type":"error","timestamp":1795739956574,"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Cannot connect to API: Unable to connect. Is the computer able to access the url?","isRetryable":true,"metadata":{"url":"https://opencode.ai/zen/v1/chat/completions"}}}}';
    expect(outcome(opencodeHarness, [line], { exitCode: 1 }).classification).toMatchObject({ errorClass: 'transient', reason: expect.stringContaining('Cannot connect to API') });
  });

  // The issue's `failed (harness) in 3s … "ref": "err_f316d64e" | } | }`: the cause is in its log on stderr.
  const unknown = '{"type":"error","timestamp":1795741310801,"sessionID":"ses_1","error":{"name":"UnknownError","data":{"message":"Unexpected server error. Check server logs for details.","ref":"err_d3f50424"}}}';
  const logged =
    'timestamp=2026-11-27T01:01:50.115Z level=ERROR run=1e1c7a49 message="Failed to fetch models.dev" cause="Cause([Fail(HttpClientError: Transport error)])"\n' +
    'timestamp=2026-11-27T01:01:50.801Z level=ERROR run=1e1c7a49 message=failed ref=err_d3f50424 error="ProviderModelNotFoundError: Model not found: anthropic/claude-sonnet-4-5. Did you mean: claude-sonnet-4-5, claude-sonnet-4-5-20250929?" cause="ProviderModelNotFoundError: Model not found\\n    at <anonymous> (/$bunfs/root/chunk-dn9bw1yz.js:439:94416)"\n';

  it('a model it does not offer (its provider has no key) is fatal, with the cause from its log and the fix', () => {
    const result = outcome(opencodeHarness, [unknown], { exitCode: 1, stderr: logged });
    expect(result.classification).toMatchObject({ errorClass: 'fatal', credentials: true });
    expect(result.classification?.reason).toBe('ProviderModelNotFoundError: Model not found: anthropic/claude-sonnet-4-5. Did you mean: claude-sonnet-4-5, claude-sonnet-4-5-20250929?. HELP');
    expect(opencodeLoggedCause('UnknownError: x (ref err_other)', logged)).toBeUndefined();
  });

  it('a clean exit with no error is a success; a crash without output quotes stderr without its noise', () => {
    expect(outcome(opencodeHarness, [], { exitCode: 0 }).classification).toBeUndefined();
    const crash = outcome(opencodeHarness, [], { exitCode: 1, stderr: 'Error: boom\n    at x (/a.js:1:1)\n}\n' });
    expect(crash.classification).toMatchObject({ errorClass: 'harness', reason: 'the harness exited (code 1) without a result: Error: boom' });
  });
});

describe('Gemini CLI 0.61.0 (--output-format stream-json)', () => {
  const ok = [
    '{"type":"init","timestamp":"2026-11-27T00:57:59.295Z","session_id":"60a4221e-aa84-4ef8-bd8a-43f6a3100808","model":"gemini-2.5-flash"}',
    '{"type":"message","timestamp":"2026-11-27T00:57:59.300Z","role":"user","content":"say hi"}',
    '{"type":"tool_use","timestamp":"2026-11-27T00:57:59.596Z","tool_name":"mcp_agent-kernel_login","tool_id":"t1","parameters":{}}',
    '{"type":"tool_result","timestamp":"2026-11-27T00:57:59.786Z","tool_id":"t1","status":"success","output":"login ok"}',
    '{"type":"message","timestamp":"2026-11-27T00:57:59.926Z","role":"assistant","content":"FAKE-MODEL-DONE ","delta":true}',
    '{"type":"message","timestamp":"2026-11-27T00:57:59.927Z","role":"assistant","content":"login ok","delta":true}',
    '{"type":"result","timestamp":"2026-11-27T00:57:59.946Z","status":"success","stats":{"total_tokens":220,"input_tokens":200,"output_tokens":20,"cached":50,"input":200,"duration_ms":652,"tool_calls":1}}',
  ];

  it('a session that worked: the streamed message joined, the tool call, tokens', () => {
    const result = outcome(geminiCliHarness, ok);
    expect(result.classification).toBeUndefined();
    expect(result).toMatchObject({ lastMessage: 'FAKE-MODEL-DONE login ok', toolCalls: 1, tokens: { input: 150, cache_read: 50, output: 20 } });
  });

  it('an unreachable model (its retries spent) is transient', () => {
    const result = outcome(
      geminiCliHarness,
      [ok[0]!, '{"type":"result","timestamp":"2026-11-27T01:10:29.176Z","status":"error","error":{"type":"unknown","message":"[API Error: exception TypeError: fetch failed sending request]"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0}}'],
      { exitCode: 1 },
    );
    expect(result.classification).toMatchObject({ errorClass: 'transient', reason: '[API Error: exception TypeError: fetch failed sending request]' });
  });

  it.each([
    ['no auth method (exit 41)', 'Please set an Auth method in your /h/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA\n'],
    ['an API key auth without a key (exit 41)', 'When using Gemini API, you must specify the GEMINI_API_KEY environment variable.\nUpdate your environment and try again (no reload needed if using .env)!\n'],
  ])('%s is fatal for want of credentials, not a harness error to retry', (_what, stderr) => {
    const result = outcome(geminiCliHarness, [], { exitCode: 41, stderr: `Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\n${stderr}` });
    expect(result.classification).toMatchObject({ errorClass: 'fatal', credentials: true });
    expect(result.classification?.reason).toMatch(/GEMINI_API_KEY.*HELP$/s);
  });
});

describe('Codex CLI 0.171.0 (exec --json)', () => {
  const ok = [
    '{"type":"thread.started","thread_id":"01a21a83-da8a-73e1-89f8-ca020468f45d"}',
    '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}',
    '{"type":"turn.started"}',
    '{"type":"item.started","item":{"id":"item_3","type":"mcp_tool_call","server":"agent-kernel","tool":"login","arguments":{},"result":null,"error":null,"status":"in_progress"}}',
    '{"type":"item.completed","item":{"id":"item_3","type":"mcp_tool_call","server":"agent-kernel","tool":"login","arguments":{},"result":{"content":[{"type":"text","text":"login ok"}],"structured_content":null},"error":null,"status":"completed"}}',
    '{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"FAKE-MODEL-DONE login ok"}}',
    '{"type":"turn.completed","usage":{"input_tokens":200,"cached_input_tokens":40,"cache_write_input_tokens":0,"output_tokens":20,"reasoning_output_tokens":0}}',
  ];

  it('a session that worked', () => {
    const result = outcome(codexHarness, ok);
    expect(result.classification).toBeUndefined();
    expect(result).toMatchObject({ lastMessage: 'FAKE-MODEL-DONE login ok', toolCalls: 1, tokens: { input: 160, cache_read: 40, output: 20 } });
  });

  it('an unreachable model (bounded retries, then the turn failed) is transient', () => {
    const lines = [
      ok[0]!,
      ok[2]!,
      '{"type":"error","message":"Reconnecting... 5/5 (Connection failed: error sending request)"}',
      '{"type":"error","message":"Connection failed: error sending request"}',
      '{"type":"turn.failed","error":{"message":"Connection failed: error sending request"}}',
    ];
    expect(outcome(codexHarness, lines, { exitCode: 1 }).classification).toMatchObject({ errorClass: 'transient', reason: 'Connection failed: error sending request' });
  });

  it.each([
    ['a provider whose key variable is missing', '{"type":"turn.failed","error":{"message":"Missing environment variable: `FAKE_KEY`."}}'],
    ['a key the service refuses', '{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Incorrect API key provided: fake. You can find your API key at https://platform.openai.com/account/api-keys., url: http://127.0.0.1:8899/v1/responses"}}'],
  ])('%s is fatal for want of credentials', (_what, line) => {
    expect(outcome(codexHarness, [ok[0]!, line], { exitCode: 1 }).classification).toMatchObject({ errorClass: 'fatal', credentials: true });
  });

  // Codex 0.171 with its default unbounded retries: a line a minute for as long as there is no network.
  const waiting = '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}';

  it('its retry notices are not progress: the session that fell silent waiting for a network ends as transient, not idle', () => {
    for (const event of codexHarness.parseLine(waiting)) expect(event).toMatchObject({ type: 'notice', unreachable: true });
    const result = outcome(codexHarness, [ok[0]!, ok[2]!, waiting, waiting, waiting], { exitCode: null, endedBy: 'idle' });
    expect(result.endedBy).toBeUndefined();
    expect(result.classification).toMatchObject({ errorClass: 'transient', reason: expect.stringContaining('waiting for network') });
  });

  it('a session idle after the model answered is idle', () => {
    const result = outcome(codexHarness, [ok[0]!, ok[2]!, waiting, ok[5]!], { exitCode: null, endedBy: 'idle' });
    expect(result).toMatchObject({ endedBy: 'idle' });
    expect(result.classification).toBeUndefined();
  });
});
