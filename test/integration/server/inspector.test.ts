import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { BIN, ROOT, clientEnv, ensureBuilt, servePids } from './helpers.js';

const run = promisify(execFile);
/** The official MCP Inspector CLI, pinned in devDependencies (0.15.0 is the newest that runs on Node 20). */
const INSPECTOR = path.join(ROOT, 'node_modules', '.bin', 'mcp-inspector');

describeWithEngine('the official MCP Inspector CLI against agent-kernel serve', () => {
  let test: TestInstance;
  let home: string;

  async function inspect(...args: string[]): Promise<Record<string, unknown>> {
    const { stdout } = await run(INSPECTOR, ['--cli', process.execPath, BIN, 'serve', test.dataDir, ...args], {
      env: clientEnv(home),
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance();
    home = await mkdtemp(path.join(os.tmpdir(), 'ak-inspector-home-'));
  });
  afterAll(async () => {
    await test?.cleanup();
    await rm(home, { recursive: true, force: true });
  });

  it('lists the five tools with their input schemas', async () => {
    const { tools } = (await inspect('--method', 'tools/list')) as { tools: Array<{ name: string; inputSchema: { properties?: object } }> };
    expect(tools.map((t) => t.name)).toEqual(['login', 'open', 'type', 'wait', 'close']);
    expect(Object.keys(tools.find((t) => t.name === 'type')?.inputSchema.properties ?? {})).toEqual(['tty', 'expect', 'text', 'enter']);
  });

  it('calls login, which brings up the container and opens TTY 0', async () => {
    const result = (await inspect('--method', 'tools/call', '--tool-name', 'login')) as { isError?: boolean; content: Array<{ text: string }>; structuredContent: object };
    expect(result.isError, result.content[0]?.text).toBeFalsy();
    expect(result.content[0]?.text).toMatch(/^Logged in to instance/);
    expect(result.structuredContent).toMatchObject({ capacity: { used: 1, max: 20 } });
  });

  it('calls wait with an argument; a new session gets the clear "login first" answer', async () => {
    const result = (await inspect('--method', 'tools/call', '--tool-name', 'wait', '--tool-arg', 'timeout=1')) as { isError?: boolean; content: Array<{ text: string }> };
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/^NOT_LOGGED_IN: .*call login\(\) first/);
  });

  it('leaves no server process behind', async () => {
    await expect.poll(() => servePids(test.dataDir), { timeout: 20_000 }).toEqual([]);
  });
});
