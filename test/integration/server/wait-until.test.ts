import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { connectStdio, ensureBuilt, type StdioSession, textOf } from './helpers.js';

interface Waited {
  reason: string;
  matched?: { tty: number; text: string };
  elapsedMs: number;
  changed: Array<{ tty: number; diff: string }>;
}

/**
 * A REPL wait cannot judge: it polls its input between naps (never blocked on the terminal,
 * so /proc says "busy"), prints a prompt of its own, and `slow` pauses mid-output like gdb
 * loading symbols.
 */
const REPL = `import select, sys, time
while True:
    sys.stdout.write('myrepl> ')
    sys.stdout.flush()
    while not select.select([0], [], [], 0)[0]:
        time.sleep(0.05)
    cmd = sys.stdin.readline().strip()
    if cmd == 'slow':
        print('loading symbols...', flush=True)
        time.sleep(2)
        print('slow done', flush=True)
    elif cmd == 'quit':
        break
    else:
        print('you said', cmd, flush=True)
`;

describeWithEngine('wait until a prompt or a regex (real container, real tmux, SDK client over stdio)', () => {
  let test: TestInstance;
  let session: StdioSession;
  const call = (name: string, args: Record<string, unknown> = {}) => session.ok(name, args);
  const wait = async (args: Record<string, unknown> = {}): Promise<Waited & { text: string }> => {
    const result = await call('wait', { timeout: 30, ...args });
    return { ...(result.structuredContent as unknown as Waited), text: textOf(result) };
  };
  const refused = async (name: string, args: Record<string, unknown>) => {
    const result = await session.call(name, args);
    expect(result.isError).toBe(true);
    return textOf(result);
  };

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance({ files: { 'system/startup.json': JSON.stringify({ terminals: [] }), 'repl.py': REPL } });
    session = await connectStdio(test.dataDir);
    await call('login');
  });
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await test?.cleanup();
  });

  it('a terminal opened with its prompt: every wait ends the moment the prompt is back, also after a pause mid-output', async () => {
    const { tty } = (await call('open', { command: `python3 -u ${test.dataDir}/repl.py`, until: { prompt: 'myrepl>' } })).structuredContent as { tty: number };
    const first = await wait();
    expect(first).toMatchObject({ reason: 'matched', matched: { tty, text: 'myrepl>' } });
    for (let i = 0; i < 3; i++) {
      await call('type', { tty, expect: 'python3', text: 'slow' });
      const slow = await wait();
      expect(slow.reason).toBe('matched');
      expect(slow.text).toContain('loading symbols...');
      expect(slow.text).toContain('slow done');
      expect(slow.text).toContain(`TTY ${tty} | python3 | matched: \`myrepl>\``);
      // The pause is inside the command: a silence rule would have returned at it.
      expect(slow.elapsedMs).toBeGreaterThanOrEqual(1500);
    }
    // Sent together with the type, the wait still covers the answer.
    const [, together] = await Promise.all([call('type', { tty, expect: 'python3', text: 'hello' }), call('wait', { timeout: 30 })]);
    expect(textOf(together)).toContain('you said hello');
    await call('type', { tty, expect: 'python3', text: 'quit' });
    expect((await wait()).reason).toBe('exited');
  }, 120_000);

  it('a terminal keeps its prompt across a server restart', async () => {
    const { tty } = (await call('open', { command: `python3 -u ${test.dataDir}/repl.py`, until: { prompt: 'myrepl>' } })).structuredContent as { tty: number };
    expect((await wait()).reason).toBe('matched');
    await session.close();
    session = await connectStdio(test.dataDir);
    await call('login');
    await wait({ timeout: 2 }); // what the restart shows again, if anything
    await call('type', { tty, expect: 'python3', text: 'slow' });
    const slow = await wait();
    expect(slow).toMatchObject({ reason: 'matched', matched: { tty, text: 'myrepl>' } });
    expect(slow.text).toContain('slow done');
    await call('close', { tty });
  }, 120_000);

  it('a wait with its own regex returns when a running command prints it, without waiting for the command to end', async () => {
    const { tty } = (await call('open')).structuredContent as { tty: number };
    await wait();
    await call('type', { tty, expect: 'bash', text: 'sleep 1; echo BUILD-OK; sleep 60' });
    const built = await wait({ until: { tty, regex: '^BUILD-(OK|FAILED)$' } });
    expect(built).toMatchObject({ reason: 'matched', matched: { tty, text: 'BUILD-OK' } });
    // The typed line itself contains BUILD-OK but is not what matched: the command printed it after a second.
    expect(built.elapsedMs).toBeGreaterThanOrEqual(800);
    await call('type', { tty, expect: 'bash', text: 'C-c' });
    await wait();
  }, 60_000);

  it('bad patterns and unknown terminals are refused in the tool\'s own words, and the server keeps serving', async () => {
    expect(await refused('wait', { until: { tty: 0, regex: '(unclosed' } })).toMatch(/until\.regex is not a valid regular expression/);
    expect(await refused('wait', { until: { tty: 0 } })).toMatch(/until takes exactly one of prompt .* or regex/);
    expect(await refused('wait', { until: { tty: 0, prompt: '$', regex: 'x' } })).toMatch(/got both/);
    expect(await refused('wait', { until: { tty: 7, prompt: '(gdb)' } })).toMatch(/TTY_NOT_FOUND: TTY 7 is not open/);
    expect(await refused('wait', { until: { tty: 0, promt: '(gdb)' } })).toMatch(/Unknown argument "promt" in until/);
    expect(await refused('open', { until: { regex: '[' } })).toMatch(/until\.regex is not a valid regular expression/);
    // A pattern that backtracks forever on the container's output is given up, not left to stall the server.
    const { tty } = (await call('open')).structuredContent as { tty: number };
    await wait();
    await call('type', { tty, expect: 'bash', text: `printf '%s!\\n' ${'a'.repeat(40)}` });
    expect(await refused('wait', { until: { tty, regex: '^(a+)+$' } })).toMatch(/took over 100 ms .* simpler pattern/);
    expect((await wait()).text).toContain(`${'a'.repeat(40)}!`);
  }, 60_000);
});
