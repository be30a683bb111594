import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { connectStdio, ensureBuilt, type StdioSession, textOf } from './helpers.js';

interface Waited {
  reason: string;
  changed: Array<{ tty: number; diff: string; fullScreen: boolean }>;
}

describeWithEngine('a program that redraws its screen without new lines is shown changed (real container, SDK client)', () => {
  let test: TestInstance;
  let session: StdioSession;
  const call = (name: string, args: Record<string, unknown> = {}) => session.ok(name, args);
  const wait = async (timeout = 10): Promise<Waited & { text: string }> => {
    const result = await call('wait', { timeout });
    return { ...(result.structuredContent as unknown as Waited), text: textOf(result) };
  };
  /** Waits until `tty` shows a screen other than `before`; returns it. */
  const nextScreen = async (tty: number, before: string, pattern: RegExp): Promise<string> => {
    let screen = before;
    await expect
      .poll(
        async () => {
          const waited = await wait(5);
          expect(waited.text).not.toContain('Nothing new');
          screen = waited.changed.find((c) => c.tty === tty)?.diff ?? screen;
          return screen !== before && pattern.test(screen);
        },
        { timeout: 30_000, interval: 10 },
      )
      .toBe(true);
    return screen;
  };

  beforeAll(async () => {
    await ensureBuilt();
    test = await createTestInstance({ files: { 'system/startup.json': JSON.stringify({ terminals: [] }) } });
    session = await connectStdio(test.dataDir);
    await call('login');
  });
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await test?.cleanup();
  });

  it('top: every wait shows its current screen, never "nothing new"', async () => {
    const { tty } = (await call('open', { command: 'top -d 1' })).structuredContent as { tty: number };
    let screen = '';
    await expect.poll(async () => (screen = (await wait()).changed.find((c) => c.tty === tty)?.diff ?? screen), { timeout: 30_000 }).toMatch(/^top - /m);
    for (let i = 0; i < 3; i++) screen = await nextScreen(tty, screen, /^top - /m);
    await call('close', { tty });
  }, 120_000);

  it('a loop that clears and redraws the normal screen in place: each wait shows the new screen', async () => {
    const { tty } = (await call('open')).structuredContent as { tty: number };
    await wait();
    await call('type', { tty, expect: 'bash', text: `i=0; while :; do printf '\\033[H\\033[2Jcounter %d\\n' $i; i=$((i+1)); sleep 0.7; done` });
    let screen = await nextScreen(tty, '', /counter \d+/);
    for (let i = 0; i < 3; i++) {
      const next = await nextScreen(tty, screen, /counter \d+/);
      expect(Number(/counter (\d+)/.exec(next)?.[1])).toBeGreaterThan(Number(/counter (\d+)/.exec(screen)?.[1]));
      screen = next;
    }
    await call('type', { tty, expect: 'bash', text: 'C-c' });
    await wait();
  }, 120_000);
});
