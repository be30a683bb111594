import { stat, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCodedError } from '../../../../src/errors.js';
import { type AgentStatus, type StatusServer, queryAgentStatus, queryStatusSocket, startStatusServer, statusSocketPath } from '../../../../src/runner/watch/service/status-api.js';

const agent: AgentStatus = {
  name: 'Scout',
  dataDir: '/data/scout',
  harness: 'claude-code',
  state: 'ticking',
  running: true,
  paused: false,
  currentTick: { number: 4, started: '2026-11-22T08:00:00.000Z', trigger: 'message' },
  lastResult: { tick: 3, status: 'ok', ended: '2026-11-22T07:00:00.000Z' },
  nextWake: { time: '2026-11-22T09:00:00.000Z', reason: 'cron 0 9 * * *' },
  restarts: 1,
  failures: 0,
  pendingMessages: 0,
  watchPid: 1234,
  watchStarted: '2026-11-21T00:00:00.000Z',
};

let dir: string;
let server: StatusServer | undefined;
let socketPath: string;

beforeEach(async () => {
  // Short: unix socket paths are limited to about 100 bytes.
  dir = await mkdtemp(path.join(os.tmpdir(), 'sa-'));
  socketPath = statusSocketPath('Scout', { AGENT_KERNEL_RUNTIME_DIR: path.join(dir, 'run') });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('the status API over a real unix socket', () => {
  it('serves health, the agent list and one agent (case-insensitive), on a 0660 socket', async () => {
    server = await startStatusServer(socketPath, () => [agent]);
    expect((await stat(socketPath)).mode & 0o777).toBe(0o660);

    const health = await queryStatusSocket(socketPath, '/v1/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ state: 'running', pid: process.pid });
    expect(typeof (health.body as { uptime_seconds: unknown }).uptime_seconds).toBe('number');

    expect(await queryStatusSocket(socketPath, '/v1/agents')).toEqual({ status: 200, body: [agent] });
    expect(await queryStatusSocket(socketPath, '/v1/agents/scout')).toEqual({ status: 200, body: agent });
    expect(await queryStatusSocket(socketPath, '/v1/agents/SCOUT/')).toEqual({ status: 200, body: agent });
  });

  it('answers 404 JSON for an unknown agent or path, and refuses writes', async () => {
    server = await startStatusServer(socketPath, () => [agent]);
    const unknown = await queryStatusSocket(socketPath, '/v1/agents/nobody');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'no agent named "nobody" is watched here' });
    const badPath = await queryStatusSocket(socketPath, '/v2/things');
    expect(badPath.status).toBe(404);
    expect((badPath.body as { error: string }).error).toMatch(/try \/v1\/health/);

    const http = await import('node:http');
    const post = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ socketPath, path: '/v1/agents', method: 'POST' }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(post.status).toBe(405);
    expect(JSON.parse(post.body)).toEqual({ error: 'method not allowed: this API is read-only (GET only)' });
  });

  it('shows live state: each request reads the current snapshot', async () => {
    let state: AgentStatus = { ...agent, state: 'idle', running: false };
    server = await startStatusServer(socketPath, () => [state]);
    expect((await queryStatusSocket(socketPath, '/v1/agents/scout')).body).toMatchObject({ state: 'idle', running: false });
    state = { ...agent, state: 'paused', paused: true, running: false, reason: 'billing' };
    expect((await queryStatusSocket(socketPath, '/v1/agents/scout')).body).toMatchObject({ state: 'paused', paused: true, reason: 'billing' });
  });

  it('refuses a second server on a live socket (another watch owns the instance), and replaces a stale one', async () => {
    server = await startStatusServer(socketPath, () => [agent]);
    let caught: unknown;
    try {
      await startStatusServer(socketPath, () => []);
    } catch (error) {
      caught = error;
    }
    expect(isCodedError(caught, 'INSTANCE_LOCKED')).toBe(true);
    expect((caught as Error).message).toMatch(/Another watch process already serves/);
    // The first one still answers.
    expect((await queryStatusSocket(socketPath, '/v1/health')).status).toBe(200);
    await server.close();
    server = undefined;

    // A file left by a watch that died: nothing listens, so it is replaced.
    await rm(socketPath, { force: true });
    await writeFile(socketPath, '');
    server = await startStatusServer(socketPath, () => [agent]);
    expect((await queryStatusSocket(socketPath, '/v1/agents')).body).toEqual([agent]);
  });

  it('gives clients the status checked against the schema both ends share; an answer that is not one counts as none', async () => {
    const env = { AGENT_KERNEL_RUNTIME_DIR: path.join(dir, 'run') };
    const kernel = { state: 'ready' as const, pid: 77, restarts: 0, terminals: 2 };
    server = await startStatusServer(socketPath, () => [{ ...agent, kernel }]);
    expect(await queryAgentStatus('Scout', env)).toEqual({ ...agent, kernel });
    await server.close();
    // Something else on the socket (an older or foreign server): its answer is not believed.
    server = await startStatusServer(socketPath, () => [{ ...agent, state: 'dancing', running: 'yes' } as unknown as AgentStatus]);
    expect(await queryAgentStatus('Scout', env)).toBeUndefined();
    await server.close();
    server = undefined;
    expect(await queryAgentStatus('Scout', env)).toBeUndefined();
  });

  it('rejects when nothing listens', async () => {
    await expect(queryStatusSocket(path.join(dir, 'none.sock'), '/v1/health', 500)).rejects.toThrow();
  });
});
