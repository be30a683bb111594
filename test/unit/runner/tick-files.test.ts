import { describe, expect, it } from 'vitest';
import { hookSettings, mcpConfig, shellQuote } from '../../../src/runner/tick-files.js';
import { openTerminalIssues, parseOpenTerminals } from '../../../src/runner/open-terminals.js';
import { composeTickPrompt } from '../../../src/runner/prompt.js';

describe('generated files', () => {
  it('starts our server with the absolute node and server bin, for the data dir', () => {
    expect(mcpConfig({ nodePath: '/usr/bin/node', serverBin: '/pkg/dist/cli/agent-kernel.js', dataDir: '/srv/a' })).toEqual({
      mcpServers: { 'agent-kernel': { type: 'stdio', command: '/usr/bin/node', args: ['/pkg/dist/cli/agent-kernel.js', 'serve', '/srv/a'], env: {} } },
    });
  });

  it('installs PreCompact, PostToolUse and Stop hooks that call hook-cli with the socket', () => {
    const settings = hookSettings({ nodePath: '/usr/bin/node', hookCli: '/pkg/dist/runner/hook-cli.js', socketPath: "/srv/my agent's/tmp/kernel/runner.sock" });
    expect(Object.keys(settings.hooks)).toEqual(['PreCompact', 'PostToolUse', 'Stop']);
    expect(settings.hooks.Stop[0]?.hooks[0]?.command).toBe(`/usr/bin/node /pkg/dist/runner/hook-cli.js stop '/srv/my agent'\\''s/tmp/kernel/runner.sock'`);
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
  it.each([
    [[{ tty: 0 }, { tty: 3, command: 'python3' }], [0, 3]],
    [{ ttys: { '0': { command: 'bash' }, '2': { status: 'closed' }, '5': {} } }, [0, 5]],
    [{ terminals: [{ tty: 1, closed: true }, { tty: 4, state: 'running' }] }, [4]],
    ['nonsense', []],
  ])('parseOpenTerminals(%j)', (input, expected) => {
    expect(parseOpenTerminals(input).map((t) => t.tty)).toEqual(expected);
  });

  it('names each non-startup terminal left open and how to close it', () => {
    expect(openTerminalIssues([{ tty: 0 }, { tty: 3, command: 'python3' }], new Set([0]))).toEqual([
      'Terminal 3 (python3) is still open: finish what runs there and close(3) before ending the tick.',
    ]);
  });
});

describe('tick prompt', () => {
  it('adds waiting messages after the prompt', () => {
    expect(composeTickPrompt('P', [])).toBe('P');
    const text = composeTickPrompt('P', ['first', 'second']);
    expect(text).toMatch(/^P\n\nMessages that arrived for you:/);
    expect(text).toContain('--- message 2 of 2 ---\nsecond');
  });
});
