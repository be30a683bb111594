import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { containerName } from '../../../src/sandbox/container/container.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { connectStdio, ensureBuilt, type StdioSession, textOf } from './helpers.js';

const run = promisify(execFile);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Waited {
  reason: string;
  changed: Array<{ tty: number; diff: string; fullScreen: boolean; alive: boolean; exitCode?: number }>;
  timeoutCapped?: { asked: number; waited: number };
}

// An agent that thinks slower than a program redraws still drives it: through the SDK's
// Client over stdio, against a real container, with the pauses a model takes between turns.
describeWithEngine('an agent that thinks slowly (real container, SDK client over stdio)', () => {
  let test: TestInstance;
  let session: StdioSession;
  const wait = async (timeout = 10): Promise<Waited & { text: string }> => {
    const result = await session.ok('wait', { timeout });
    return { ...(result.structuredContent as unknown as Waited), text: textOf(result) };
  };
  const type = (tty: number, expect_: string, text: string) => session.call('type', { tty, expect: expect_, text });
  /** Every wait's text of this file, for the paths they name. */
  const texts: string[] = [];
  const seen = async (timeout = 10) => {
    const waited = await wait(timeout);
    texts.push(waited.text);
    return waited;
  };

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

  for (const refresh of [1, 3]) {
    it(`top redrawing every ${refresh} s: q after 3.5 s of thinking is accepted, 3 times of 3`, async () => {
      for (let round = 0; round < 3; round++) {
        const { tty } = (await session.ok('open', { command: `top -d ${refresh}` })).structuredContent as { tty: number };
        await expect.poll(async () => (await seen()).changed.find((c) => c.tty === tty)?.diff ?? '', { timeout: 30_000 }).toMatch(/^top - /m);
        // The model thinks; top redraws meanwhile (its frames are state, not news).
        await pause(3500);
        const quit = await type(tty, 'top', 'q');
        expect(quit.isError, textOf(quit)).toBeFalsy();
        await expect.poll(async () => (await seen()).changed.find((c) => c.tty === tty)?.alive, { timeout: 30_000 }).toBe(false);
      }
    }, 120_000);
  }

  it("top's threads view (H) is shown in full, header included", async () => {
    const { tty } = (await session.ok('open', { command: 'top -d 3' })).structuredContent as { tty: number };
    await expect.poll(async () => (await seen()).changed.find((c) => c.tty === tty)?.diff ?? '', { timeout: 30_000 }).toMatch(/^Tasks:/m);
    await pause(3500);
    expect((await type(tty, 'top', 'H')).isError).toBeFalsy();
    const threads = (await seen()).changed.find((c) => c.tty === tty);
    expect(threads).toMatchObject({ fullScreen: true });
    expect(threads?.diff).toMatch(/^top - [\s\S]*^Threads:[\s\S]*PID/m);
    await pause(3500);
    expect((await type(tty, 'top', 'H')).isError).toBeFalsy();
    expect((await seen()).changed.find((c) => c.tty === tty)?.diff).toMatch(/^Tasks:/m);
    await type(tty, 'top', 'q');
    await expect.poll(async () => (await seen()).changed.find((c) => c.tty === tty)?.alive, { timeout: 30_000 }).toBe(false);
  }, 90_000);

  it('its own echo is not news: hello then C-d into `cat > file` without a wait between; the file holds hello', async () => {
    const { tty } = (await session.ok('open')).structuredContent as { tty: number };
    await seen();
    expect((await type(tty, 'bash', 'cat > /tmp/slow-agent.txt')).isError).toBeFalsy();
    expect((await seen()).reason).toBe('input');
    expect((await type(tty, 'cat', 'hello')).isError).toBeFalsy();
    // The echo has arrived by now.
    await pause(300);
    const eof = await type(tty, 'cat', 'C-d');
    expect(eof.isError, textOf(eof)).toBeFalsy();
    expect((await seen()).reason).toBe('command-finished');
    const { stdout } = await run('docker', ['exec', containerName(test.name), 'cat', '/tmp/slow-agent.txt']);
    expect(stdout).toBe('hello\n');
  }, 60_000);

  it('news is still refused, and the refusal says what it is: output, a finished command, a prompt', async () => {
    const { tty } = (await session.ok('open')).structuredContent as { tty: number };
    await seen();
    await type(tty, 'bash', 'echo one; echo two');
    await pause(500);
    const finished = await type(tty, 'bash', 'echo three');
    expect(textOf(finished)).toBe(`UNSEEN_OUTPUT: TTY ${tty} has news you have not seen: a command finished with exit code 0. Nothing was sent. Call wait() to see it, then type again.`);
    expect((await seen()).text).toMatch(/^one\ntwo$/m);
    // A progress line rewritten in place is state; the question after it is news. (A wrong expect is
    // checked after the news: EXPECT_MISMATCH means the news check let the keys through, and nothing was sent.)
    await type(tty, 'bash', `for i in $(seq 1 20); do printf '\\r%d%%' $((i * 5)); sleep 0.2; done; printf '\\rready? '; read answer; echo "answer=$answer"`);
    await seen(1);
    await pause(1000);
    expect(textOf(await type(tty, 'no-such-program', 'x'))).toMatch(/^EXPECT_MISMATCH/);
    await expect
      .poll(async () => textOf(await type(tty, 'no-such-program', 'x')), { timeout: 30_000, interval: 300 })
      .toMatch(new RegExp(`^UNSEEN_OUTPUT: TTY ${tty} has news you have not seen: bash asks for input at \`ready\\?\``));
    expect((await seen()).text).toContain('ready?');
    expect((await type(tty, 'bash', 'yes')).isError).toBeFalsy();
    expect((await seen()).text).toContain('answer=yes');
  }, 90_000);

  it('wait({timeout: 60}) returns a normal result (capped at 50 s, and says so), not a refusal', async () => {
    const { tty } = (await session.ok('open')).structuredContent as { tty: number };
    await seen();
    await type(tty, 'bash', 'sleep 1; echo slept');
    const result = await session.call('wait', { timeout: 60 });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ reason: 'command-finished', timeoutCapped: { asked: 60, waited: 50 } });
    expect(textOf(result)).toContain('slept');
  }, 90_000);

  it('every path a wait names opens inside the container: elided output, a cut result, an archive, the replay', async () => {
    const { tty } = (await session.ok('open')).structuredContent as { tty: number };
    await seen();
    await type(tty, 'bash', 'seq 1 3000');
    expect((await seen()).text).toMatch(/left out .*sed -n/);
    await type(tty, 'bash', `python3 -c "for i in range(30): print(str(i) + 'z' * 1990)"`);
    expect((await seen()).text).toMatch(/characters left out to keep this result short/);
    await session.ok('open', { command: 'echo goodbye' });
    await expect.poll(async () => (await seen()).text, { timeout: 30_000 }).toMatch(/ended and was closed; its scrollback is archived at/);
    const paths = [...new Set(texts.join('\n').match(/(?<![\w.])\/[\w.@+-]+(?:\/[\w.@+-]+)+/g) ?? [])];
    expect(paths.some((p) => p.endsWith('/scrollback')), paths.join('\n')).toBe(true);
    expect(paths.some((p) => p.includes('/system/logs/sessions/')), paths.join('\n')).toBe(true);
    expect(paths.some((p) => p.endsWith('.cast')), paths.join('\n')).toBe(true);
    const missing: string[] = [];
    for (const file of paths) {
      await run('docker', ['exec', containerName(test.name), 'test', '-e', file]).catch(() => missing.push(file));
    }
    expect(missing, `named in wait texts but not in the container:\n${paths.join('\n')}`).toEqual([]);
  }, 120_000);
});
