import { describe, expect, it } from 'vitest';
import { mcpServerSpec } from '../../../../src/runner/harnesses/mcp-server-spec.js';
import { serverEnv } from '../../../../src/config/server-env.js';
import { hookSettings } from '../../../../src/runner/session/tick-files.js';
import { shellQuote } from '../../../../src/util/shell-quote.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openTerminalIssues, readOpenTerminals } from '../../../../src/runner/tick/open-terminals.js';
import { composeTickPrompt } from '../../../../src/runner/session/prompt.js';

describe('generated files', () => {
  it('starts our server with the absolute node and server bin, for the data dir', () => {
    expect(mcpServerSpec({ nodePath: '/usr/bin/node', serverBin: '/pkg/dist/cli/agent-kernel.js', dataDir: '/srv/a' })).toEqual({
      command: '/usr/bin/node',
      args: ['/pkg/dist/cli/agent-kernel.js', 'serve', '/srv/a'],
      env: {},
    });
  });

  it("gives the server the runner's config and state homes and engine, whatever the harness passes on", () => {
    const env = serverEnv({ AGENT_KERNEL_CONFIG_DIR: '/c', AGENT_KERNEL_STATE_DIR: '/s', DOCKER_HOST: 'unix:///run/podman/podman.sock', OPENAI_API_KEY: 'sk-secret' });
    expect(env).toEqual({ AGENT_KERNEL_CONFIG_DIR: '/c', AGENT_KERNEL_STATE_DIR: '/s', AGENT_KERNEL_CLIENT: 'tick', DOCKER_HOST: 'unix:///run/podman/podman.sock' });
  });

  it('installs PreCompact, PostToolUse and Stop hooks that call the hook command (dist/cli/hook.js) with the socket', () => {
    const settings = hookSettings({ nodePath: '/usr/bin/node', hookCli: '/pkg/dist/cli/hook.js', socketPath: "/srv/my agent's/tmp/kernel/runner.sock" });
    expect(Object.keys(settings.hooks)).toEqual(['PreCompact', 'PostToolUse', 'Stop']);
    expect(settings.hooks.Stop[0]?.hooks[0]?.command).toBe(`/usr/bin/node /pkg/dist/cli/hook.js stop '/srv/my agent'\\''s/tmp/kernel/runner.sock'`);
    expect(settings.hooks.PostToolUse[0]?.matcher).toBe('*');
  });

  it.each([
    ['plain/path-1.js', 'plain/path-1.js'],
    ['a b', "'a b'"],
    ["it's", `'it'\\''s'`],
    ['$HOME', "'$HOME'"],
  ])('shellQuote(%j) = %s', (word, expected) => {
    expect(shellQuote(word)).toBe(expected);
  });
});

describe('open terminals at stop', () => {
  const terminal = (tty: number, alive = true) => ({ tty, command: 'bash', program: 'bash', alive, openedAt: '2026-11-23T09:00:00Z', dir: `/d/tty_${tty}` });
  const registry = (ttys: unknown[]) => ({ instance: 'a', sandbox: 'docker', updatedAt: '2026-11-23T09:00:00Z', tmuxSocket: 'agent-kernel', ttys });

  it.each([
    ['every listed terminal, an exited one too, by number', registry([terminal(3), terminal(0, false)]), [0, 3]],
    ['none in an empty registry', registry([]), []],
  ])('reads %s', async (_what, content, expected) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'registry-'));
    await writeFile(path.join(dir, 'registry.json'), JSON.stringify(content));
    expect((await readOpenTerminals(path.join(dir, 'registry.json'))).map((t) => t.tty)).toEqual(expected);
    await rm(dir, { recursive: true });
  });

  it('reports a registry that is not one, and counts no terminal from it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'registry-'));
    await writeFile(path.join(dir, 'registry.json'), JSON.stringify({ terminals: [{ tty: 4, state: 'running' }] }));
    const problems: unknown[] = [];
    expect(await readOpenTerminals(path.join(dir, 'registry.json'), (e) => problems.push(e))).toEqual([]);
    expect(String(problems[0])).toMatch(/is not a terminal registry/);
    expect(await readOpenTerminals(path.join(dir, 'absent.json'))).toEqual([]);
    await rm(dir, { recursive: true });
  });

  it('names each non-startup terminal left open and how to close it', () => {
    expect(openTerminalIssues([{ tty: 0 }, { tty: 3, command: 'python3' }], new Set([0]))).toEqual([
      'Terminal 3 (python3) is still open: finish what runs there and close(3) before ending the tick.',
    ]);
    const leftovers = [{ tty: 0, background: ['sleep (pid 42, 1 MB)'] }, { tty: 2, command: 'bash', background: ['python3 (pid 50, 120 MB)'] }];
    expect(openTerminalIssues(leftovers, new Set([0]))).toEqual([
      'Terminal 0 has background processes left: sleep (pid 42, 1 MB). Stop them (or close(0)) before ending the tick.',
      'Terminal 2 (bash) is still open: finish what runs there and close(2) before ending the tick. Still running in the background there: python3 (pid 50, 120 MB).',
    ]);
  });
});

describe('tick prompt', () => {
  it('adds waiting messages after the prompt', () => {
    expect(composeTickPrompt('P', [])).toBe('P');
    const text = composeTickPrompt('P', ['first', 'second']);
    expect(text).toMatch(/^P\n\nMessages that arrived for you\. Lines that start with "\|" are words someone wrote/);
    expect(text).toContain('--- message 2 of 2 ---\nsecond');
  });
});
