import os from 'node:os';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { readEvents } from '../../../src/observe/events/event-log.js';
import { startTick, type TickRetry } from '../../../src/runner/tick/tick.js';
import { formatStatusTable, gatherStatus } from '../../../src/runner/watch/service/status-view.js';
import { loadState } from '../../../src/state/runner-state.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { pollUntil } from '../../helpers/poll.js';
import { REAL_CLAUDE, type TickTestInstance, readJsonLines, tickTestInstance } from './tick-helpers.js';

/**
 * The real Claude Code CLI with its API at a closed port: one retry policy, the runner's, whose
 * state (attempt, cause, next try) `kernel-runner status` shows within seconds of the failure,
 * and whose retries end within runner.retry.total.
 */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describeWithEngine('an unreachable model', () => {
  let t: TickTestInstance | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it('status shows the cause and the next try within 15 s of the failure, and the retries end within the configured total', { timeout: 180_000 }, async () => {
    const port = await closedPort();
    const totalMs = 45_000;
    t = await tickTestInstance({
      command: REAL_CLAUDE,
      retry: { max_attempts: 4, initial: '4s', max: '8s', total: '45s' },
      env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`, ANTHROPIC_API_KEY: 'sk-ant-api03-closed-port-test' },
    });
    const retries: { retry: TickRetry; at: number }[] = [];
    const started = Date.now();
    const running = await startTick(t.instance, { logger: t.logger, env: t.env, onRetry: (retry) => retry && retries.push({ retry, at: Date.now() }) });

    // What a person sees while the tick waits to try again.
    let shown = '';
    await pollUntil(
      async () => {
        const [row] = await gatherStatus(t!.instance.name, t!.env);
        shown = formatStatusTable(row ? [row] : []);
        return row?.state === 'retrying';
      },
      'status to say the tick is retrying',
      { timeoutMs: 90_000, intervalMs: 250 },
    ).catch(async (error: unknown) => {
      const log = (await readJsonLines(t!.instance.paths.tickLog(running.tick)).catch(() => [])).map((l) => JSON.stringify(l).slice(0, 300));
      throw new Error(`${(error as Error).message}; status showed:\n${shown}\nthe tick's log:\n${log.join('\n')}`);
    });
    const seenAt = Date.now();
    expect(shown).toMatch(/why\s+attempt 1 of 4 failed: .*Unable to connect to API \(ConnectionRefused\)/);
    expect(shown).toMatch(/next wake\s+\d\d:\d\d:\d\dZ \(retry 2 of 4\)/);
    for (const line of shown.split('\n')) expect(line.length).toBeLessThanOrEqual(100);

    // Within 15 s of the first attempt's start: Claude Code no longer retries for minutes on its own.
    const log = await readJsonLines(t.instance.paths.tickLog(running.tick));
    const firstAttempt = Date.parse(String(log.find((l) => l.event === 'attempt-start')?.time));
    expect(seenAt - firstAttempt).toBeLessThan(15_000);
    process.stderr.write(`retry-policy: status said retrying ${seenAt - firstAttempt} ms after the first attempt started; load ${os.loadavg()[0]!.toFixed(1)}\n${shown}\n`);
    const current = (await loadState(t.instance.paths.state)).current;
    expect(current?.retry).toMatchObject({ attempt: 1, max_attempts: 4, cause: expect.stringContaining('ConnectionRefused') });

    const outcome = await running.done;
    expect(outcome).toMatchObject({ status: 'failed', errorClass: 'transient' });
    expect(outcome.error).toContain('Unable to connect to API (ConnectionRefused)');
    // The last try starts before the total is up; it takes seconds, not Claude Code's minutes.
    expect(Date.now() - started).toBeLessThan(totalMs + 20_000);
    expect(retries.length).toBeGreaterThanOrEqual(1);
    for (const { retry } of retries) expect(Date.parse(retry.next_at)).toBeLessThan(started + totalMs);
    const { events } = await readEvents(t.instance.paths.events);
    expect(events.filter((e) => e.type === 'tick.retry')).toHaveLength(retries.length);
  });
});
