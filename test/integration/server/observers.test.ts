import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import { silentLogger } from '../../../src/log/logger.js';
import { tmuxSocketName } from '../../../src/tty/host/tmux-server.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { killTmuxServer } from '../tty/helpers/terminals.js';
import { ensureBuilt, startHttpServe, textOf } from './helpers.js';

interface Session {
  transport: StreamableHTTPClientTransport;
  client: Client;
  call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>;
}

// A person watching over HTTP (a second session) must not take what the agent has not seen:
// two real SDK Clients on one server, the agent's marks kept across a restart.
describe('observers steal nothing (two MCP sessions over HTTP)', () => {
  let test: TestInstance;
  let serve: Awaited<ReturnType<typeof startHttpServe>>;
  const token = 'observers-test-token-0123456789abcdef';
  const sessions: Session[] = [];

  async function connect(): Promise<Session> {
    const client = new Client({ name: 'observers-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(serve.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    await client.connect(transport);
    const session = { transport, client, call: async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult };
    sessions.push(session);
    return session;
  }

  /** wait() until the text seen includes `marker`; returns all it saw. */
  async function waitFor(session: Session, marker: string): Promise<string> {
    let seen = '';
    await expect.poll(async () => (seen += `${textOf(await session.call('wait', { timeout: 5 }))}\n`).includes(marker), { timeout: 60_000, interval: 0 }).toBe(true);
    return seen;
  }

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance({ config: { container: { backend: 'host' } }, containerfile: false });
    serve = await startHttpServe(test.dataDir, [], { AGENT_KERNEL_TOKEN: token });
  });
  afterAll(async () => {
    for (const s of sessions) await s.client.close().catch(() => undefined);
    await serve?.stop();
    const sandbox = await openSandbox(test.instance, { logger: silentLogger() });
    await killTmuxServer(sandbox, tmuxSocketName(sandbox, test.name));
    await test?.cleanup();
  });

  it("an observer's waits show the agent's news without taking it; the agent still gets it, also after a restart", async () => {
    const agent = await connect();
    const person = await connect();
    expect((await agent.call('login')).structuredContent).toMatchObject({ role: 'agent' });
    const watching = await person.call('login');
    expect(watching.structuredContent).toMatchObject({ role: 'observer' });
    expect(textOf(watching)).toMatch(/You are observing/);
    await waitFor(agent, 'TTY 0');

    await agent.call('type', { tty: 0, expect: 'bash', text: 'for i in 1 2 3; do echo obs-line-$i; done; echo obs-done' });
    // The person sees the output first, and again: nothing they look at is marked seen.
    const observed = await waitFor(person, 'obs-done');
    expect(observed).toMatch(/Observing: this is what the agent has not seen yet/);
    expect(textOf(await person.call('wait', { timeout: 0 }))).toContain('obs-line-3');
    const refused = await person.call('type', { tty: 0, expect: 'bash', text: 'echo from-the-person' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/You are observing.*login\(\{ observe: false \}\)/s);
    expect((await person.call('open')).isError).toBe(true);

    // The agent gets every line, as if nobody had watched.
    const seen = await waitFor(agent, 'obs-done');
    for (const line of ['obs-line-1', 'obs-line-2', 'obs-line-3']) expect(seen).toContain(line);
    expect(textOf(await agent.call('wait', { timeout: 0 }))).not.toContain('obs-line');
    // What the agent has seen, the observer no longer gets as news.
    expect(textOf(await person.call('wait', { timeout: 0 }))).not.toContain('obs-line');

    // Output the observer watched but the agent did not is still unseen after a restart.
    await agent.call('type', { tty: 0, expect: 'bash', text: 'echo before-$((6 * 7))-restart' });
    await waitFor(person, 'before-42-restart');
    for (const s of sessions.splice(0)) await s.client.close().catch(() => undefined);
    expect(await serve.stop()).toBe(0);
    serve = await startHttpServe(test.dataDir, [], { AGENT_KERNEL_TOKEN: token });
    const next = await connect();
    const login = await next.call('login');
    expect(login.structuredContent).toMatchObject({ role: 'agent', unseen: [{ tty: 0 }] });
    expect(await waitFor(next, 'before-42-restart')).toContain('before-42-restart');
    await next.transport.terminateSession();
  }, 180_000);

  it('the role is free again when the agent session ends, and login({ observe: false }) takes it over', async () => {
    const first = await connect();
    const second = await connect();
    expect((await first.call('login')).structuredContent).toMatchObject({ role: 'agent' });
    expect((await second.call('login')).structuredContent).toMatchObject({ role: 'observer' });
    expect((await second.call('login', { observe: false })).structuredContent).toMatchObject({ role: 'agent' });
    expect(textOf(await first.call('type', { tty: 0, expect: 'bash', text: 'echo hi' }))).toMatch(/You are observing/);
    expect((await first.call('login', { observe: true })).structuredContent).toMatchObject({ role: 'observer' });
    await second.transport.terminateSession();
    await second.client.close();
    // The agent's session ended: the next login without observe takes the role.
    expect((await first.call('login')).structuredContent).toMatchObject({ role: 'agent' });
  }, 120_000);
});
