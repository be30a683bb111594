import { execFile, spawn } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { packageFiles } from '../../../src/config/package-files.js';

const TAP = packageFiles().mcpTapCli;

/** A stand-in MCP server: answers every request with the same two tools, exits when its stdin ends. */
const SERVER = `require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const { id } = JSON.parse(line);
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [{ name: 'login' }, { name: 'wait' }] } }) + '\\n');
});`;

describe('the MCP tap (the server a harness starts when the runner cannot ask it)', () => {
  let dir: string;
  beforeEach(async () => {
    await access(TAP);
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-tap-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("passes the conversation through unchanged, records what it shows, and leaves the server's options to the server", async () => {
    const recordFile = path.join(dir, 'mcp-tap.jsonl');
    // `--no-warnings -e`: options of the server's command line, after `--`, are not the tap's.
    const child = spawn(process.execPath, [TAP, recordFile, '--', process.execPath, '--no-warnings', '-e', SERVER], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'opencode', version: '1.18' } } }) + '\n');
    child.stdin.end(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) + '\n');
    expect(await exited).toBe(0);
    const answer = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [{ name: 'login' }, { name: 'wait' }] } });
    expect(stdout).toBe(`${answer(1)}\n${answer(2)}\n`);
    const records = (await readFile(recordFile, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toMatchObject([
      { t: 'initialize', client: { name: 'opencode', version: '1.18' } },
      { t: 'tools', names: ['login', 'wait'] },
      { t: 'exit', code: 0, signal: null },
    ]);
  });

  it('refuses a command line without a server, saying what was wrong and how it is run', async () => {
    const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(process.execPath, [TAP, path.join(dir, 'mcp-tap.jsonl')], (error, _stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }));
    });
    expect(code).toBe(2);
    expect(stderr).toBe('agent-kernel mcp-tap: Missing arguments. Usage: node dist/cli/mcp-tap.js <record-file> -- <command> [args...]\n');
  });
});
