import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { pollUntil } from '../../helpers/poll.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { connectStdio, ensureBuilt, type StdioSession, textOf } from './helpers.js';

interface Waited {
  reason: string;
  changed: Array<{ tty: number; text: string; exitCode?: number; files: { screen: string } }>;
}

/**
 * Every refusal and reply names the right next step for the state the terminal is in (real
 * container, real tmux, the SDK client over stdio, the tools as an agent calls them).
 */
describeWithEngine('replies that name the right next step', () => {
  let test: TestInstance;
  let session: StdioSession;
  const wait = async (timeout = 20): Promise<Waited & { text: string }> => {
    const result = await session.ok('wait', { timeout });
    return { ...(result.structuredContent as unknown as Waited), text: textOf(result) };
  };
  const type = (tty: number, expect_: string, text: string) => session.call('type', { tty, expect: expect_, text });

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance({ files: { 'system/startup.json': JSON.stringify({ terminals: [] }) } });
    session = await connectStdio(test.dataDir);
    await session.ok('login');
  });
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await test?.cleanup();
  });

  it('type right after open is not refused for the shell\'s first prompt: nothing ran', async () => {
    const opened = await session.ok('open');
    const tty = (opened.structuredContent as { tty: number }).tty;
    // The first prompt is drawn (its marks read by the server) before the agent types.
    const screen = `${test.instance.paths.tty(tty)}/screen`;
    await pollUntil(async () => /[$#] *$/m.test(await readFile(screen, 'utf8').catch(() => '')), 'the first prompt on the screen', { timeoutMs: 30_000 });
    const typed = await type(tty, 'bash', 'echo first-$((6*7))');
    expect(textOf(typed), textOf(typed)).not.toMatch(/news you have not seen/);
    expect(typed.isError).toBeFalsy();
    const done = await wait();
    expect(done.reason).toBe('command-finished');
    expect(done.text).toContain('first-42');
  });

  it('a mismatch with a program running where the agent meant its shell says wait or C-c, not to type into it', async () => {
    const opened = await session.ok('open');
    const tty = (opened.structuredContent as { tty: number }).tty;
    await wait();
    expect((await type(tty, 'bash', 'sleep 300')).isError).toBeFalsy();
    await pollUntil(async () => (await listProgram(tty)) === 'sleep', 'sleep in the foreground', { timeoutMs: 20_000 });
    const refused = textOf(await type(tty, 'bash', 'ls'));
    expect(refused).toMatch(/^EXPECT_MISMATCH: TTY \d+ is running sleep, not bash\. Nothing was sent\./);
    expect(refused).not.toMatch(/expect: "sleep"/);
    expect(refused).toContain(`type({ tty: ${tty}, expect: "bash", text: "C-c" })`);
    expect(refused).toContain('wait()');
    // The step it names works.
    expect((await type(tty, 'bash', 'C-c')).isError).toBeFalsy();
    expect((await wait()).reason).toBe('command-finished');
  });

  it('C-d in the Python REPL ends it with no stray `>>>` in the reply', async () => {
    const opened = await session.ok('open');
    const tty = (opened.structuredContent as { tty: number }).tty;
    await wait();
    expect((await type(tty, 'bash', 'python3 -q')).isError).toBeFalsy();
    expect((await wait()).reason).toBe('input');
    expect((await type(tty, 'python3', 'print(6*7)')).isError).toBeFalsy();
    expect((await wait()).text).toContain('42');
    expect((await type(tty, 'python3', 'C-d')).isError).toBeFalsy();
    const ended = await wait();
    const mine = ended.changed.find((c) => c.tty === tty);
    expect(ended.reason).toBe('command-finished');
    expect(mine?.text ?? '').not.toMatch(/>>>/);
  });

  async function listProgram(tty: number): Promise<string | undefined> {
    const result = await session.ok('wait', { timeout: 1 });
    const open = (result.structuredContent as { open: Array<{ tty: number; program: string }> }).open;
    return open.find((t) => t.tty === tty)?.program;
  }
});
