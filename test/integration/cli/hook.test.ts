import { execFile } from 'node:child_process';
import net from 'node:net';
import { access, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type HookChannel, type HookEventKind, hookSocketPath, listenHookChannel } from '../../../src/runner/hooks/hook-channel.js';
import { packageFiles } from '../../../src/config/package-files.js';

const HOOK_CLI = packageFiles().hookCli;

/** Run the built hook command as Claude Code does: JSON on stdin, decision on stdout. */
function hook(kind: string, socket: string, input: unknown): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [HOOK_CLI, kind, socket], { timeout: 20_000 }, (error, stdout) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout });
    });
    child.stdin?.end(JSON.stringify(input));
  });
}

describe('the hook command (cli/hook.ts, which Claude Code runs for our hooks)', () => {
  let dir: string;
  let channel: HookChannel | undefined;
  const seen: Array<{ kind: HookEventKind; input: Record<string, unknown> }> = [];

  beforeEach(async () => {
    await access(HOOK_CLI);
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-hook-'));
    seen.length = 0;
  });
  afterEach(async () => {
    await channel?.close();
    channel = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('forwards the hook input to the runner and prints its decision', async () => {
    const socket = hookSocketPath(dir);
    channel = await listenHookChannel(
      socket,
      async (kind, input) => {
        seen.push({ kind, input });
        return kind === 'stop' ? { stdout: JSON.stringify({ decision: 'block', reason: 'close(3) first' }) } : {};
      },
      () => {},
    );
    const stop = await hook('stop', socket, { hook_event_name: 'Stop', stop_hook_active: false });
    expect(stop).toEqual({ code: 0, stdout: '{"decision":"block","reason":"close(3) first"}\n' });
    const post = await hook('post-tool-use', socket, { hook_event_name: 'PostToolUse', tool_name: 'mcp__agent-kernel__wait' });
    expect(post).toEqual({ code: 0, stdout: '' });
    expect(seen).toEqual([
      { kind: 'stop', input: { hook_event_name: 'Stop', stop_hook_active: false } },
      { kind: 'post-tool-use', input: { hook_event_name: 'PostToolUse', tool_name: 'mcp__agent-kernel__wait' } },
    ]);
  });

  it('fails open without a runner, except PreCompact, which still blocks', async () => {
    const socket = path.join(dir, 'nobody.sock');
    expect(await hook('stop', socket, {})).toEqual({ code: 0, stdout: '' });
    expect(await hook('post-tool-use', socket, {})).toEqual({ code: 0, stdout: '' });
    const compact = await hook('pre-compact', socket, { trigger: 'auto' });
    expect(compact.code).toBe(0);
    expect(JSON.parse(compact.stdout)).toMatchObject({ decision: 'block' });
  });

  it('refuses a hook it does not know, saying how it is run, and blocks nothing', async () => {
    const socket = hookSocketPath(dir);
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [HOOK_CLI, 'pre-compat', socket], (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }));
      child.stdin?.end('{}');
    });
    expect({ code, stdout }).toEqual({ code: 0, stdout: '' });
    expect(stderr).toBe(`agent-kernel hook: Unknown hook "pre-compat". Usage: node dist/cli/hook.js <pre-compact|post-tool-use|stop> <runner socket>\n`);
  });

  /** Write raw bytes to the channel and read what it answers before it closes. */
  function raw(socket: string, text: string): Promise<string> {
    return new Promise((resolve, reject) => {
      let answer = '';
      const connection = net.createConnection(socket, () => connection.write(text));
      connection.setEncoding('utf8');
      connection.on('data', (chunk: string) => (answer += chunk));
      connection.on('end', () => resolve(answer));
      connection.on('error', reject);
    });
  }

  it('handles one request per connection, and only kinds it knows', async () => {
    const socket = hookSocketPath(dir);
    const errors: string[] = [];
    channel = await listenHookChannel(
      socket,
      async (kind, input) => {
        seen.push({ kind, input });
        return { stdout: 'handled' };
      },
      (error) => errors.push((error as Error).message),
    );
    // A second line on the same connection must not run the handler a second time.
    const twice = JSON.stringify({ kind: 'stop', input: { n: 1 } }) + '\n' + JSON.stringify({ kind: 'stop', input: { n: 2 } }) + '\n';
    expect(await raw(socket, twice)).toBe('{"stdout":"handled"}\n');
    expect(await raw(socket, JSON.stringify({ kind: 'rm -rf', input: {} }) + '\n')).toBe('{}\n');
    expect(await raw(socket, JSON.stringify({ kind: 'stop', input: 'text' }) + '\n')).toBe('{}\n');
    expect(await raw(socket, '[1]\n')).toBe('{}\n');
    expect(seen).toEqual([{ kind: 'stop', input: { n: 1 } }]);
    expect(errors).toEqual([
      'hook request has an unknown kind "rm -rf"; expected one of pre-compact, post-tool-use, stop',
      'hook request input is not an object',
      'hook request has an unknown kind undefined; expected one of pre-compact, post-tool-use, stop',
    ]);
  });

  it('keeps unix socket paths short enough', () => {
    expect(hookSocketPath('/srv/a/tmp/kernel')).toBe('/srv/a/tmp/kernel/runner.sock');
    const long = hookSocketPath(`/srv/${'x'.repeat(120)}/tmp/kernel`);
    expect(long.startsWith(os.tmpdir())).toBe(true);
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(100);
  });
});
