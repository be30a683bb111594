import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { createMcpServer } from '../../../src/server/create-server.js';
import { TerminalsRuntime } from '../../../src/server/terminals/runtime.js';
import { makeUnitDataDir, removeUnitDataDir, unitPaths } from '../../helpers/test-instance.js';
import { FakeTerminals } from './fake-terminals.js';
import { seededRandom } from './malformed-arguments.js';

/**
 * tools/call requests as raw JSON-RPC, as a client with a bug or a fuzzer sends them (the SDK's
 * Client checks nothing it sends): params, names and arguments of every wrong shape. Each must
 * get the tools' own words, what was wrong and a call to make next; before, arguments that were
 * not an object got a JSON-RPC internal error with a raw schema dump, an empty name "Tool  not
 * found", and a `__proto__` argument was accepted where every other unknown one is refused.
 */
let dataDir: string;
let raw: InMemoryTransport;
const waiting = new Map<number, (reply: JSONRPCMessage) => void>();
let nextId = 1;

async function request(method: string, params?: unknown): Promise<JSONRPCMessage> {
  const id = nextId++;
  const reply = new Promise<JSONRPCMessage>((resolve) => waiting.set(id, resolve));
  await raw.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) } as JSONRPCMessage);
  return reply;
}

/** The text of a tools/call answer that must be a refusal in the tools' words. */
function refusal(reply: JSONRPCMessage, what: string): string {
  expect('error' in reply, `${what} → JSON-RPC error ${JSON.stringify(reply).slice(0, 300)}`).toBe(false);
  const result = (reply as unknown as { result: { isError?: boolean; content: Array<{ text: string }> } }).result;
  const text = result.content.map((c) => c.text).join('\n');
  expect(result.isError, `${what} → ${text.slice(0, 300)}`).toBe(true);
  return text;
}

/** What every refusal says: no schema dump, a call to make next, short. */
function expectExplained(text: string, what: string): void {
  expect(text, what).not.toMatch(/"code":|invalid_type|expected \w+, received|Internal error|MCP error/i);
  expect(text, what).toMatch(/\b(?:login|open|type|wait|close)\(/);
  expect(text.length, what).toBeLessThan(2000);
}

beforeAll(async () => {
  dataDir = await makeUnitDataDir('ak-requests-');
  const runtime = new TerminalsRuntime(() => Promise.resolve(new FakeTerminals(dataDir)), silentLogger());
  const { server } = createMcpServer({ runtime, instance: { name: 'requests', dataDir, paths: unitPaths('requests', dataDir) }, logger: silentLogger() });
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  raw = client;
  raw.onmessage = (message) => {
    if ('id' in message && ('result' in message || 'error' in message)) waiting.get(Number(message.id))?.(message);
  };
  await server.connect(serverSide);
  await raw.start();
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
  await raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await request('tools/call', { name: 'login', arguments: {} });
});
afterAll(async () => {
  await raw.close();
  await removeUnitDataDir(dataDir);
});

describe('malformed tools/call requests (raw JSON-RPC)', () => {
  it('arguments that are not an object: what was wrong and a call that works, not a schema dump', async () => {
    for (const args of [[1, 2], 'ls', 5, true, null]) {
      const text = refusal(await request('tools/call', { name: 'wait', arguments: args }), JSON.stringify(args));
      expect(text).toMatch(/^USAGE: wait\(\) was not run, nothing happened: its arguments must be an object of named values \(such as \{"tty": 0\}\), not (an array|a string|a number|a boolean|null)\. Try wait\(\)/);
    }
  });

  it('an empty, missing or non-string tool name is named as such, with the tools there are', async () => {
    expect(refusal(await request('tools/call', { name: '', arguments: {} }), 'empty')).toBe(
      'UNKNOWN_TOOL: There is no tool with an empty name. The tools are login, open, type, wait, close: call login() first, then wait() to look and type() to act.',
    );
    expect(refusal(await request('tools/call', { arguments: {} }), 'missing')).toMatch(/^UNKNOWN_TOOL: The request names no tool\. The tools are login/);
    expect(refusal(await request('tools/call', { name: 7 }), 'number')).toMatch(/^UNKNOWN_TOOL: There is no tool named by a number\./);
  });

  it('a __proto__ argument is refused like any unknown one', async () => {
    const text = refusal(await request('tools/call', JSON.parse('{"name": "login", "arguments": {"__proto__": {"observe": true}}}')), '__proto__');
    expect(text).toBe('USAGE: login() was not run, nothing happened: Unknown argument "__proto__": login takes observe. Try login().');
    // constructor and toString are ordinary unknown keys.
    expect(refusal(await request('tools/call', { name: 'wait', arguments: { constructor: 1 } }), 'constructor')).toMatch(/Unknown argument "constructor": wait takes timeout, until/);
  });

  it('params or a _meta that are not objects get an error that says so, not silence (the SDK drops them unanswered)', async () => {
    const notObject = await request('tools/call', null);
    expect(notObject).toMatchObject({ error: { code: -32600, message: 'Invalid request "tools/call": params must be an object, not null. Nothing was run. A tool call is {"method": "tools/call", "params": {"name": "wait", "arguments": {"timeout": 10}}}, as in wait({timeout: 10}).' } });
    expect(await request('tools/call', { name: 'wait', arguments: { timeout: 0 }, _meta: 5 })).toMatchObject({ error: { code: -32600, message: expect.stringMatching(/^Invalid request "tools\/call": params\._meta must be an object, not a number\./) } });
  });

  it('3,000 random malformed requests: every answer says what was wrong and what to call next, and the server keeps serving', async () => {
    const random = seededRandom(24_024);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const names: unknown[] = ['', ' ', 'wait ', 'WAIT', 'rm -rf /', 'x'.repeat(5000), 'ｗａｉｔ', 5, null, {}, [], true, undefined, 'login', 'open', 'type', 'wait', 'close'];
    const shapes: unknown[] = [null, [], [1], 'text', 0, -1, true, false, { __proto__: null }, JSON.parse('{"__proto__": {"tty": 0}}'), { zz: 1 }, { tty: 'x' }, { timeout: -5 }, { tty: 0, expect: '', text: 'ls' }];
    const metas: unknown[] = [undefined, undefined, undefined, 5, 'm', null, [], { progressToken: {} }];
    let withoutNextStep = 0;
    for (let i = 0; i < 3000; i++) {
      const name = pick(names);
      const valid = typeof name === 'string' && ['login', 'open', 'type', 'wait', 'close'].includes(name);
      const meta = pick(metas);
      // Valid names get an argument shape no tool takes; invalid ones anything.
      const args = valid ? pick(shapes.filter((s) => !(typeof s === 'object' && s !== null && Object.keys(s).length === 0 && !Array.isArray(s)))) : pick([...shapes, {}]);
      const params = { ...(name === undefined ? {} : { name }), arguments: args, ...(meta === undefined ? {} : { _meta: meta }) };
      const what = JSON.stringify(params).slice(0, 200);
      const reply = await request('tools/call', params);
      // A request the SDK does not take for one (a _meta of the wrong shape) is answered with a JSON-RPC error.
      const text = 'error' in reply ? reply.error.message : refusal(reply, what);
      if ('error' in reply) expect(reply.error.code, what).toBe(-32600);
      if (!/\b(?:login|open|type|wait|close)\(/.test(text)) withoutNextStep += 1;
      expectExplained(text, what);
    }
    expect(withoutNextStep).toBe(0);
    const ok = await request('tools/call', { name: 'wait', arguments: { timeout: 0 } });
    expect((ok as unknown as { result: { isError?: boolean } }).result.isError).toBeFalsy();
  }, 120_000);
});
