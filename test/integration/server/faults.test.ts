import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killTmuxServer } from '../tty/helpers/terminals.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import { silentLogger } from '../../../src/log/logger.js';
import { tmuxSocketName } from '../../../src/tty/host/tmux-server.js';
import { createTestInstance, type TestInstance } from '../../helpers/test-instance.js';
import { seededRandom } from '../../unit/server/malformed-arguments.js';
import { connectStdio, ensureBuilt, type StdioSession, textOf } from './helpers.js';
import { checkNothingLost } from '../../../bench/lib/nothing-lost.mjs';

/** Kills per run: a few in CI, more with FAULT_KILLS (the bench runs over 100). */
const KILLS = Number(process.env.FAULT_KILLS ?? 8);
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 100_000);

type Moment = 'during output' | 'during a wait' | 'right after a reply' | 'during adoption';
const MOMENTS: Moment[] = ['during output', 'during a wait', 'right after a reply', 'during adoption'];

interface WaitOut {
  changed: Array<{ tty: number; diff: string; elidedLines: number; totalLines: number }>;
}

// The server SIGKILLed at random moments while a terminal prints numbered lines, through
// the SDK's Client over stdio: every line arrives; a line comes twice only under the
// "possibly repeated" label.
describe('nothing lost, nothing silently repeated, across server death', () => {
  let test: TestInstance;
  let session: StdioSession | undefined;
  const reports: Array<{ text: string }> = [];

  beforeAll(async () => {
    await ensureBuilt();
    // A small history limit, so that tmux trims its history (and the saved marks must follow) while servers die.
    test = await createTestInstance({ config: { container: { backend: 'host' }, tty: { history_limit: 1000 } }, containerfile: false });
  });
  afterAll(async () => {
    await session?.close().catch(() => undefined);
    const sandbox = await openSandbox(test.instance, { logger: silentLogger() });
    await killTmuxServer(sandbox, tmuxSocketName(sandbox, test.name));
    await test?.cleanup();
  });

  const record = (result: Awaited<ReturnType<StdioSession['call']>>, tty: number) => {
    if (result.isError) return;
    const report = (result.structuredContent as unknown as WaitOut).changed.find((c) => c.tty === tty);
    if (report) reports.push({ text: report.diff });
  };

  it(`keeps every line across ${KILLS} SIGKILLs at random moments (seed ${SEED})`, async () => {
    const random = seededRandom(SEED);
    const start = async () => {
      session = await connectStdio(test.dataDir);
      return session;
    };
    const kill = async (s: StdioSession) => {
      try {
        process.kill(s.pid, 'SIGKILL');
      } catch {
        // gone already
      }
      await s.close().catch(() => undefined);
    };
    let s = await start();
    expect((await s.call('login')).isError).toBeFalsy();
    const tty = (await s.call('open')).structuredContent?.tty as number;
    await s.call('wait', { timeout: 10 });
    const lines = 2000 + KILLS * 100;
    await s.call('type', { tty, expect: 'bash', text: `for i in $(seq 1 ${lines}); do echo L-$i; sleep 0.005; done; echo loop-done` });
    const moments: Moment[] = [];
    for (let k = 0; k < KILLS; k++) {
      const moment = MOMENTS[Math.floor(random() * MOMENTS.length)]!;
      moments.push(moment);
      const delay = Math.floor(random() * 400);
      if (moment === 'during output') {
        await new Promise((r) => setTimeout(r, delay));
        await kill(s);
      } else if (moment === 'during a wait') {
        const pending = s.call('wait', { timeout: 2 }).then((result) => record(result, tty), () => undefined);
        await new Promise((r) => setTimeout(r, delay));
        // A client reads what is in the pipe before it sees the server gone: let the call settle first.
        process.kill(s.pid, 'SIGKILL');
        await pending;
        await kill(s);
      } else if (moment === 'right after a reply') {
        record(await s.call('wait', { timeout: 0.3 }), tty);
        await new Promise((r) => setTimeout(r, delay / 20));
        await kill(s);
      } else {
        await kill(s);
        s = await start();
        const login = s.call('login').catch(() => undefined);
        await new Promise((r) => setTimeout(r, delay));
        await kill(s);
        await login;
      }
      s = await start();
      expect((await s.call('login')).isError, s.stderr()).toBeFalsy();
      record(await s.call('wait', { timeout: 0.5 }), tty);
    }
    let all = '';
    for (let i = 0; i < 60 && !/loop-done/.test(all); i++) {
      const result = await s.call('wait', { timeout: 10 });
      record(result, tty);
      all += textOf(result);
    }
    const verdict = checkNothingLost(reports);
    console.log(`faults: ${KILLS} kills (${moments.join(', ')}), ${verdict.labelledRepeats} lines shown again under the label`);
    expect(verdict, `moments: ${moments.join(', ')}`).toMatchObject({ lost: [], unlabelledRepeats: [], inconsistentElisions: 0, wrongGoneCounts: 0 });
    expect(verdict.last).toBe(lines);
  }, 600_000);
});
