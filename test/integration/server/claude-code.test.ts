import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { BIN, ROOT, clientEnv, ensureBuilt, servePids } from './helpers.js';

/** Claude Code itself, pinned in devDependencies (2.1.197). */
const CLAUDE = path.join(ROOT, 'node_modules', '.bin', 'claude');

interface InitLine {
  type: 'system';
  subtype: 'init';
  tools: string[];
  mcp_servers: Array<{ name: string; status: string }>;
}

function runClaude(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(CLAUDE, args, { env, timeout: 180_000, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    child.stdin?.end();
  });
}

describeWithEngine('Claude Code with agent-kernel in --mcp-config', () => {
  let test: TestInstance;
  let home: string;

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance();
    home = await mkdtemp(path.join(os.tmpdir(), 'ak-claude-home-'));
  });
  afterAll(async () => {
    for (const pid of await servePids(test.dataDir)) process.kill(pid, 'SIGKILL');
    await test?.cleanup();
    await rm(home, { recursive: true, force: true });
  });

  it('reports our server connected with its five tools, then stops with "Not logged in"; no server is left behind', async () => {
    const config = path.join(home, 'mcp.json');
    // alwaysLoad: connect before the first turn and keep the five tools in context (not behind tool search).
    await writeFile(config, JSON.stringify({ mcpServers: { kernel: { type: 'stdio', command: process.execPath, args: [BIN, 'serve', test.dataDir], alwaysLoad: true } } }));
    const { stdout } = await runClaude(['-p', 'hi', '--mcp-config', config, '--strict-mcp-config', '--output-format', 'stream-json', '--verbose'], clientEnv(home));
    const lines = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; subtype?: string; result?: string; is_error?: boolean });
    const init = lines.find((l) => l.type === 'system' && l.subtype === 'init') as InitLine | undefined;
    expect(init, stdout.slice(0, 2000)).toBeDefined();
    expect(init?.mcp_servers).toContainEqual({ name: 'kernel', status: 'connected' });
    expect(init?.tools.filter((t) => t.startsWith('mcp__kernel__')).sort()).toEqual(
      ['mcp__kernel__close', 'mcp__kernel__login', 'mcp__kernel__open', 'mcp__kernel__type', 'mcp__kernel__wait'],
    );
    const result = lines.find((l) => l.type === 'result');
    expect(result).toMatchObject({ is_error: true, result: expect.stringMatching(/Not logged in/) });
    await expect.poll(() => servePids(test.dataDir), { timeout: 20_000 }).toEqual([]);
  });
});
