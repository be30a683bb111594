import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { createMcpServer } from '../../../src/server/create-server.js';
import { TerminalsRuntime } from '../../../src/server/terminals/runtime.js';
import { FakeTerminals } from './fake-terminals.js';
import { HUGE, malformedArguments, seededRandom } from './malformed-arguments.js';
import { makeUnitDataDir, removeUnitDataDir, unitPaths } from '../../helpers/test-instance.js';

let dataDir: string;
let client: Client;

beforeAll(async () => {
  dataDir = await makeUnitDataDir('ak-fuzz-');
  const runtime = new TerminalsRuntime(() => Promise.resolve(new FakeTerminals(dataDir)), silentLogger());
  const { server } = createMcpServer({ runtime, instance: { name: 'fuzz', dataDir, paths: unitPaths('fuzz', dataDir) }, logger: silentLogger() });
  const [a, b] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: 'fuzz', version: '1.0.0' });
  await Promise.all([server.connect(b), client.connect(a)]);
  await client.callTool({ name: 'login', arguments: {} });
});
afterAll(async () => {
  await client.close();
  await removeUnitDataDir(dataDir);
});

describe('every tool with malformed arguments', () => {
  for (const tool of ['login', 'open', 'type', 'wait', 'close']) {
    it(`${tool}: answers each with a clear isError and keeps serving`, async () => {
      for (const args of malformedArguments(tool, seededRandom(tool.length * 7919))) {
        const result = (await client.callTool({ name: tool, arguments: args as Record<string, unknown> })) as CallToolResult;
        const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
        expect(result.isError, `${tool}(${JSON.stringify(args).slice(0, 200)}) → ${text.slice(0, 300)}`).toBe(true);
        // The tool's own words and a next step, never the SDK's validation dump.
        expect(text).toMatch(new RegExp(`^USAGE: ${tool}\\(\\) was not run, nothing happened: .+ Try ${tool}\\(`, 's'));
        expect(text).not.toMatch(/Input validation error|MCP error|Unrecognized key|expected \w+, received|invalid_type/i);
        expect(text.length).toBeLessThan(4000);
      }
      const ok = (await client.callTool({ name: 'wait', arguments: { timeout: 0 } })) as CallToolResult;
      expect(ok.isError).toBeFalsy();
    });
  }

  it('text longer than any type() takes is refused naming the real cap (tty.max_text_bytes), not the schema\'s', async () => {
    const result = (await client.callTool({ name: 'type', arguments: { tty: 0, expect: 'bash', text: HUGE } })) as CallToolResult;
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    expect(result.isError).toBe(true);
    expect(text).toMatch(/^TEXT_TOO_LONG: The text is 2000000 bytes; type\(\) sends at most 16384 \(tty\.max_text_bytes\)\. Send it in smaller parts/);
  });

  it('answers an unknown tool name with an error and keeps serving', async () => {
    const result = (await client.callTool({ name: 'rm_rf', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    expect(text).toBe('UNKNOWN_TOOL: There is no tool "rm_rf". The tools are login, open, type, wait, close: call login() first, then wait() to look and type() to act.');
    expect((await client.listTools()).tools).toHaveLength(5);
  });
});
