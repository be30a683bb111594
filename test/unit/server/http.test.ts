import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { createMcpServer, type McpServerDeps } from '../../../src/server/create-server.js';
import { type RunningHttpServer, type SessionBackend, startHttpServer } from '../../../src/server/http.js';
import { TerminalsRuntime } from '../../../src/server/terminals/runtime.js';
import { FakeTerminals } from './fake-terminals.js';
import { makeUnitDataDir, removeUnitDataDir, unitPaths } from '../../helpers/test-instance.js';

const TOKEN = 'test-token-0123456789abcdef';
let dataDir: string;
let fake: FakeTerminals;
let running: RunningHttpServer;

/** Each HTTP session an MCP server of this process on `deps`' terminals (serve relays them to the kernel instead). */
function serverSessions(deps: McpServerDeps): SessionBackend {
  return async (transport) => {
    const { server, cleanup } = createMcpServer(deps);
    await server.connect(transport);
    return { cleanup };
  };
}

beforeAll(async () => {
  dataDir = await makeUnitDataDir('ak-http-unit-');
  fake = new FakeTerminals(dataDir);
  const runtime = new TerminalsRuntime(() => Promise.resolve(fake), silentLogger());
  running = await startHttpServer({
    backend: serverSessions({ runtime, instance: { name: 'http-unit', dataDir, paths: unitPaths('http-unit', dataDir) }, logger: silentLogger() }),
    logger: silentLogger(),
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
    tokenHint: 'The token is in /somewhere.',
  });
});
afterAll(async () => {
  await running.close();
  await removeUnitDataDir(dataDir);
});

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

function post(body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(running.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

async function connectClient(): Promise<Client> {
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(running.url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  return client;
}

/** Close a client and end its session on the server (DELETE), as a client that says goodbye does. */
async function endClient(client: Client): Promise<void> {
  await (client.transport as StreamableHTTPClientTransport | undefined)?.terminateSession();
  await client.close();
}

describe('the HTTP guards', () => {
  it('answers a request without a token with 401 and a JSON explanation', async () => {
    const response = await post(INIT);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(await response.json()).toEqual({ error: 'missing_token', message: expect.stringMatching(/Authorization: Bearer <token>.*\/somewhere/) });
  });

  it('answers a wrong token with 401', async () => {
    const response = await post(INIT, { authorization: 'Bearer not-the-token-at-all-xx' });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'wrong_token' });
  });

  it('answers a foreign Origin with 403, even with the right token', async () => {
    const response = await post(INIT, { authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example' });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: 'forbidden_origin', message: expect.stringContaining('evil.example') });
  });

  it('accepts a loopback Origin with the right token', async () => {
    const response = await post(INIT, { authorization: `Bearer ${TOKEN}`, origin: 'http://localhost:6274' });
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeTruthy();
    await response.body?.cancel();
  });
});

describe('sessions', () => {
  it('serves two clients at once, sharing one set of terminals: the first to log in acts, the other observes', async () => {
    const [a, b] = await Promise.all([connectClient(), connectClient()]);
    expect((await a.callTool({ name: 'login', arguments: {} })).structuredContent).toMatchObject({ role: 'agent' });
    expect((await b.callTool({ name: 'login', arguments: {} })).structuredContent).toMatchObject({ role: 'observer' });
    const opened = (await a.callTool({ name: 'open', arguments: { command: 'python3' } })) as CallToolResult;
    const tty = (opened.structuredContent as { tty: number }).tty;
    const seen = (await b.callTool({ name: 'wait', arguments: { timeout: 1 } })) as CallToolResult;
    expect(seen.structuredContent).toMatchObject({ changed: expect.arrayContaining([expect.objectContaining({ tty, program: 'python3' })]) });
    expect((await b.callTool({ name: 'close', arguments: { tty } })).isError).toBe(true);
    await a.callTool({ name: 'close', arguments: { tty } });
    await Promise.all([endClient(a), endClient(b)]);
  });

  it('survives a client that disconnects mid-wait: the wait is aborted and nothing is marked seen', async () => {
    const init = await post(INIT, { authorization: `Bearer ${TOKEN}` });
    const session = init.headers.get('mcp-session-id') ?? '';
    await init.text();
    const headers = { authorization: `Bearer ${TOKEN}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).text();
    await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'login', arguments: {} } }, headers)).text();
    await (await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'wait', arguments: { timeout: 0 } } }, headers)).text();

    await (await post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'open', arguments: {} } }, headers)).text();
    const pending = [...[...fake.ttys.values()].flatMap((t) => t.unseen)];
    expect(pending.length).toBeGreaterThan(0);
    // The wait is busy (as for a command still running) while that output is pending, when the client goes away.
    fake.holdWaits = true;
    const aborted = fake.waitsAborted;
    const controller = new AbortController();
    const waiting = post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'wait', arguments: { timeout: 50 } } }, headers, controller.signal)
      .then((r) => r.text())
      .catch((error: unknown) => error);
    await expect.poll(() => fake.waitsBlocked).toBe(1);
    controller.abort();
    await waiting;
    await expect.poll(() => fake.waitsAborted).toBe(aborted + 1);
    expect([...fake.ttys.values()].flatMap((t) => t.unseen)).toEqual(pending);

    // The output is still unseen, for whoever waits next, and only it.
    fake.holdWaits = false;
    const client = await connectClient();
    // The session that went away mid-call still exists (no DELETE): take the agent's role over from it.
    await client.callTool({ name: 'login', arguments: { observe: false } });
    const after = (await client.callTool({ name: 'wait', arguments: { timeout: 1 } })) as CallToolResult;
    expect(after.isError).toBeFalsy();
    expect(after.structuredContent).toMatchObject({ changed: [{ diff: pending.join('\n') }] });
    await client.close();
  });

  it('ends the backend session of a client that ends its own (DELETE), as a relay to the kernel needs to give the role back', async () => {
    const ended: string[] = [];
    const counting = await startHttpServer({
      backend: async (transport) => {
        const runtime = new TerminalsRuntime(() => Promise.resolve(fake), silentLogger());
        const served = await serverSessions({ runtime, instance: { name: 'http-unit', dataDir, paths: unitPaths('http-unit', dataDir) }, logger: silentLogger() })(transport);
        return {
          cleanup: async () => {
            ended.push(transport.sessionId ?? '?');
            await served.cleanup();
          },
        };
      },
      logger: silentLogger(),
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      tokenHint: 'The token is in /somewhere.',
    });
    try {
      const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const init = await fetch(counting.url, { method: 'POST', headers, body: JSON.stringify(INIT) });
      const id = init.headers.get('mcp-session-id') ?? '';
      await init.text();
      expect(counting.sessionCount()).toBe(1);
      const gone = await fetch(counting.url, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' } });
      expect(gone.status).toBe(200);
      await expect.poll(() => ended).toEqual([id]);
      expect(counting.sessionCount()).toBe(0);
    } finally {
      await counting.close();
    }
    // Closing the server later does not end it twice.
    expect(ended).toHaveLength(1);
  });

  it('refuses an unknown session id with 404 and a request without initialize with 400', async () => {
    const headers = { authorization: `Bearer ${TOKEN}` };
    const unknown = await post({ jsonrpc: '2.0', id: 9, method: 'tools/list' }, { ...headers, 'mcp-session-id': 'nope' });
    expect(unknown.status).toBe(404);
    const noInit = await post({ jsonrpc: '2.0', id: 9, method: 'tools/list' }, headers);
    expect(noInit.status).toBe(400);
    const notJson = await fetch(running.url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{oops' });
    expect(notJson.status).toBe(400);
  });
});

describe('limits', () => {
  let limited: RunningHttpServer;
  beforeAll(async () => {
    const runtime = new TerminalsRuntime(() => Promise.resolve(fake), silentLogger());
    limited = await startHttpServer({
      backend: serverSessions({ runtime, instance: { name: 'http-unit', dataDir, paths: unitPaths('http-unit', dataDir) }, logger: silentLogger() }),
      logger: silentLogger(),
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      tokenHint: 'The token is in /somewhere.',
      maxSessions: 2,
      sessionIdleMs: 400,
      maxBodyBytes: 2000,
    });
  });
  afterAll(async () => {
    await limited.close();
  });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}` };
  const init = () => fetch(limited.url, { method: 'POST', headers, body: JSON.stringify(INIT) });

  it('answers 413 to a body over the limit and 405 to an unserved method, and keeps serving', async () => {
    const big = await fetch(limited.url, { method: 'POST', headers, body: JSON.stringify({ ...INIT, pad: 'x'.repeat(5000) }) });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { message: string }).message).toMatch(/at most 2000 bytes/);
    const put = await fetch(limited.url, { method: 'PUT', headers, body: '{}' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('POST, GET, DELETE');
  });

  it('refuses a session over the cap with 503 naming the next step, and closes idle sessions', async () => {
    const first = await init();
    expect(first.status).toBe(200);
    const id = first.headers.get('mcp-session-id') as string;
    expect((await init()).status).toBe(200);
    const third = await init();
    expect(third.status).toBe(503);
    expect(await third.text()).toMatch(/A slot frees as soon as a client disconnects or ends its session \(DELETE .*in \d+ s\)/);
    expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
    // Nobody uses them: both expire, and a new client gets in.
    await expect.poll(() => limited.sessionCount(), { timeout: 10_000 }).toBe(0);
    const gone = await fetch(limited.url, { method: 'POST', headers: { ...headers, 'mcp-session-id': id }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    expect(gone.status).toBe(404);
    expect((await init()).status).toBe(200);
  });
});
