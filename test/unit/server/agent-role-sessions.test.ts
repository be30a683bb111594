import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { createMcpServer } from '../../../src/server/create-server.js';
import { AgentRole } from '../../../src/server/terminals/agent-role.js';
import { TerminalsRuntime } from '../../../src/server/terminals/runtime.js';
import { makeUnitDataDir, removeUnitDataDir, unitPaths } from '../../helpers/test-instance.js';
import { FakeTerminals } from './fake-terminals.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await makeUnitDataDir('ak-role-unit-');
});
afterEach(async () => {
  await removeUnitDataDir(dataDir);
});

// Two MCP sessions on one runtime, as over HTTP: the agent's client vanishes without ending its session.
describe('the agent role passes from a session that went quiet', () => {
  it('after the idle time, a new login is the agent and the vanished session observes; a running call keeps the role', async () => {
    const clock = { now: 1_000_000 };
    const terminals = new FakeTerminals(dataDir);
    const runtime = new TerminalsRuntime(() => Promise.resolve(terminals), silentLogger(), new AgentRole(60_000, () => clock.now));
    const sessions: { call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>; close: () => Promise<unknown> }[] = [];
    async function connect() {
      const { server, cleanup } = createMcpServer({ runtime, instance: { name: 'unit', dataDir, paths: unitPaths('unit', dataDir) }, logger: silentLogger() });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const client = new Client({ name: 'role-test', version: '1.0.0' });
      await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
      const session = { call: async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult, close: () => Promise.all([client.close(), cleanup()]) };
      sessions.push(session);
      return session;
    }
    try {
      const vanished = await connect();
      expect((await vanished.call('login')).structuredContent).toMatchObject({ role: 'agent' });
      clock.now += 50_000;
      await vanished.call('wait', { timeout: 0 });
      clock.now += 59_000;
      const early = await connect();
      expect((await early.call('login')).structuredContent).toMatchObject({ role: 'observer' });
      clock.now += 1_000;
      const next = await connect();
      expect((await next.call('login')).structuredContent).toMatchObject({ role: 'agent' });
      const refused = await vanished.call('type', { tty: 0, expect: 'bash', text: 'ls' });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toMatch(/observing/i);
    } finally {
      for (const s of sessions) await s.close();
    }
  });
});
