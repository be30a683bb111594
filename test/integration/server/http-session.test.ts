import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { ensureBuilt, startHttpServe, textOf } from './helpers.js';

describeWithEngine('agent-kernel serve --http (real container, real tmux)', () => {
  let test: TestInstance;
  let serve: Awaited<ReturnType<typeof startHttpServe>>;
  let token: string;
  // The generated token lives in the per-user config dir (a temp one here), never in the data dir the container sees.
  const configDir = () => path.join(path.dirname(test.dataDir), 'config');
  const tokenFile = () => path.join(configDir(), 'tokens', `${test.name}.token`);

  async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport; call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult> }> {
    const client = new Client({ name: 'http-integration', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(serve.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    await client.connect(transport);
    return { client, transport, call: async (name, args = {}) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 300_000 })) as CallToolResult };
  }

  function post(body: unknown, headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
    return fetch(serve.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  }

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance();
    serve = await startHttpServe(test.dataDir, [], { AGENT_KERNEL_TOKEN: '', AGENT_KERNEL_CONFIG_DIR: configDir() });
    token = (await readFile(tokenFile(), 'utf8')).trim();
  });
  afterAll(async () => {
    await serve?.stop();
    await test?.cleanup();
  });

  it('listens on 127.0.0.1 with a generated token stored owner-only and printed once', async () => {
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect((await stat(tokenFile())).mode & 0o777).toBe(0o600);
    expect(serve.stderr().split(token).length - 1).toBe(1);
    expect(await readFile(path.join(test.instance.paths.logs, 'server.log'), 'utf8')).not.toContain(token);
  });

  it('refuses no token and a wrong token with 401, a foreign origin with 403, each with a JSON explanation', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    const none = await post(init, {});
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: 'missing_token', message: expect.stringContaining(tokenFile()) });
    const wrong = await post(init, { authorization: 'Bearer wrong-wrong-wrong-wrong' });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: 'wrong_token' });
    const rebinding = await post(init, { authorization: `Bearer ${token}`, origin: 'http://attacker.example' });
    expect(rebinding.status).toBe(403);
    expect(await rebinding.json()).toMatchObject({ error: 'forbidden_origin' });
  });

  it('runs a whole session and serves two clients at once on the same terminals: one acts, the other observes', async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    const loginA = await a.call('login');
    const loginB = await b.call('login');
    expect(loginA.structuredContent, textOf(loginA)).toMatchObject({ role: 'agent' });
    expect(loginB.structuredContent, textOf(loginB)).toMatchObject({ role: 'observer', capacity: { used: 1 } });
    await a.call('wait', { timeout: 5 });
    await a.call('type', { tty: 0, expect: 'bash', text: 'echo from-client-a' });
    let seen = '';
    await expect.poll(async () => (seen += textOf(await b.call('wait', { timeout: 10 }))).includes('from-client-a'), { timeout: 60_000, interval: 0 }).toBe(true);
    expect(textOf(await b.call('open'))).toMatch(/You are observing/);
    // b takes the agent's role over; a now observes.
    expect((await b.call('login', { observe: false })).structuredContent).toMatchObject({ role: 'agent' });
    const opened = await b.call('open');
    expect(opened.structuredContent).toMatchObject({ tty: 1 });
    expect(textOf(await a.call('close', { tty: 1 }))).toMatch(/You are observing/);
    await b.call('wait', { timeout: 5 });
    expect(textOf(await b.call('close', { tty: 1 }))).toMatch(/Closed TTY 1/);
    await b.transport.terminateSession();
    await Promise.all([a.client.close(), b.client.close()]);
  });

  it('survives a client that disconnects mid-wait, and what came meanwhile is still unseen', async () => {
    const init = await post(
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
      { authorization: `Bearer ${token}` },
    );
    const headers = { authorization: `Bearer ${token}`, 'mcp-session-id': init.headers.get('mcp-session-id') ?? '', 'mcp-protocol-version': '2025-06-18' };
    await init.text();
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).text();
    await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'login', arguments: {} } }, headers)).text();
    await (await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'wait', arguments: { timeout: 2 } } }, headers)).text();
    await (await post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'type', arguments: { tty: 0, expect: 'bash', text: 'sleep 2; echo while-away' } } }, headers)).text();

    const controller = new AbortController();
    // The headers come once the call is dispatched to the tool; then the client goes away.
    const response = await post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'wait', arguments: { timeout: 50 } } }, headers, controller.signal);
    expect(response.status).toBe(200);
    controller.abort();
    await response.text().catch(() => undefined);
    await expect.poll(async () => (await readFile(path.join(test.instance.paths.logs, 'server.log'), 'utf8')).includes('cancelling it')).toBe(true);

    const c = await connect();
    // The session that went away mid-call still exists (no DELETE): take the agent's role over from it.
    expect((await c.call('login', { observe: false })).structuredContent).toMatchObject({ role: 'agent' });
    let seen = '';
    await expect.poll(async () => (seen += textOf(await c.call('wait', { timeout: 10 }))).includes('while-away'), { timeout: 60_000, interval: 0 }).toBe(true);
    await c.client.close();
  });

  it('shuts down on SIGTERM, releasing the lock and leaving the terminals running', async () => {
    expect(await serve.stop()).toBe(0);
    await expect(stat(test.instance.paths.instanceLock)).rejects.toThrow();
    serve = await startHttpServe(test.dataDir, [], { AGENT_KERNEL_TOKEN: '', AGENT_KERNEL_CONFIG_DIR: configDir() });
    const c = await connect();
    const login = await c.call('login');
    expect(login.structuredContent).toMatchObject({ adopted: [0], lost: [] });
    await c.client.close();
  });
});
