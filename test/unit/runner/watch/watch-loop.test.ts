import { mkdir, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Instance, loadInstance as loadInstanceOf } from '../../../../src/config/instance.js';
import { instancePaths } from '../../../../src/config/paths.js';
import { createLogger } from '../../../../src/log/logger.js';
import { sendOperatorMessage } from '../../../../src/mail/operator-send.js';
import { Watch } from '../../../../src/runner/watch/watch.js';
import { TickRecorder } from './fake-ticks.js';
import { unitPaths } from '../../../helpers/test-instance.js';
import { pollUntil } from '../../../helpers/poll.js';

let root: string;
let dataDir: string;
let configDir: string;
let watch: Watch | undefined;
let ticks: TickRecorder;

const instanceEnv = () => ({ AGENT_KERNEL_CONFIG_DIR: configDir, AGENT_KERNEL_STATE_DIR: `${dataDir}.state` });

async function loadInstance(): Promise<Instance> {
  return loadInstanceOf('loop', dataDir, instanceEnv());
}

/** The operator's configuration of the instance (runner fields are the operator's). */
const operatorFile = () => instancePaths('loop', dataDir, instanceEnv()).operatorConfig;

/** The operator's limits are off unless a test sets them: these tests tick as fast as the loop decides. */
async function writeConfig(runner: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
  await mkdir(path.dirname(operatorFile()), { recursive: true });
  await writeFile(operatorFile(), JSON.stringify({ runner: { limits: { min_interval: '0s', ticks_per_hour: 3600 }, ...runner }, ...extra }, null, 2));
}

/** A message from the operator (kernel-runner send). */
async function send(text: string, label?: string): Promise<string> {
  return (await sendOperatorMessage({ name: 'loop', paths: instancePaths('loop', dataDir, instanceEnv()) }, { text, ...(label ? { label } : {}) })).id;
}

async function startWatch(options: { detect?: string } = {}): Promise<Watch> {
  const logger = createLogger({ process: 'watch-loop', logDir: unitPaths('loop', dataDir).logs, stderr: false });
  watch = new Watch(await loadInstance(), {
    startTick: ticks.start,
    loadInstance,
    logger,
    pollMs: 100,
    env: { AGENT_KERNEL_CONFIG_DIR: configDir },
    ...(options.detect ? { detectInterruptedTick: () => Promise.resolve({ notice: options.detect!, diedMidTick: true }) } : {}),
  });
  await watch.start();
  return watch;
}

const inbox = () => unitPaths('loop', dataDir);

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'watch-loop-'));
  dataDir = path.join(root, 'data');
  configDir = path.join(root, 'config');
  await mkdir(path.join(dataDir, 'system'), { recursive: true });
  await writeConfig({ backoff: { initial: '50ms', max: '200ms', reset_after: '1h' } });
  ticks = new TickRecorder();
});

afterEach(async () => {
  await watch?.stop();
  watch = undefined;
  await rm(root, { recursive: true, force: true });
});

describe('watch loop (injected tick)', () => {
  it('ticks when a message arrives, hands it over, and moves it to inbox/done', async () => {
    await startWatch();
    expect(ticks.ticks).toHaveLength(0);
    const id = await send('please check the build', 'alice');
    const tick = await pollUntil(() => ticks.ticks[0], 'a tick');
    expect(tick.messages.join('\n')).toContain('please check the build');
    expect(tick.messages.join('\n')).toContain('From: the operator, signed "alice"');
    await pollUntil(async () => (await readdir(inbox().mail.delivered).catch((): string[] => [])).includes(`${id}.json`), 'message delivered');
    tick.finish({ failed: false, status: 'normal' });
    await pollUntil(() => watch!.status().state === 'idle', 'idle after the tick');
    expect(watch!.status().lastResult).toMatchObject({ status: 'normal', tick: 1 });
  });

  it('delivers a message that arrives during a tick to the running agent, not to the next tick', async () => {
    await startWatch();
    await send('first');
    const tick = await pollUntil(() => ticks.ticks[0], 'a tick');
    await send('arrived mid-tick', 'bob');
    await pollUntil(() => tick.delivered.length > 0, 'mid-tick delivery');
    expect(tick.delivered[0]).toContain('arrived mid-tick');
    expect(tick.delivered[0]).toContain('signed "bob"');
    await pollUntil(async () => (await readdir(inbox().mail.queue)).filter((f) => f.endsWith('.json')).length === 0, 'queue emptied');
    tick.finish({ failed: false, status: 'normal' });
    await pollUntil(() => watch!.status().state === 'idle', 'idle');
    expect(ticks.ticks).toHaveLength(1);
  });

  it('never overlaps ticks: messages during a tick do not start a second one', async () => {
    ticks = new TickRecorder();
    await startWatch();
    await send('one');
    const tick = await pollUntil(() => ticks.ticks[0], 'a tick');
    for (let i = 0; i < 3; i++) await send(`more ${i}`);
    await pollUntil(() => tick.delivered.length === 3, 'three deliveries');
    expect(ticks.ticks).toHaveLength(1);
    expect(watch!.status()).toMatchObject({ running: true, state: 'ticking', currentTick: { number: 1, trigger: 'message' } });
    tick.finish({ failed: false, status: 'normal' });
  });

  it('does not tick while system/paused exists, and resumes when it is removed', async () => {
    await writeFile(inbox().paused, 'billing problem: fix the card\n');
    await startWatch();
    await send('are you there?');
    await pollUntil(() => watch!.status().state === 'paused' && watch!.status().pendingMessages === 1, 'paused, one message waiting');
    expect(watch!.status()).toMatchObject({ paused: true, reason: 'billing problem: fix the card', pendingMessages: 1 });
    // Watch looks again several times (paused, a message waiting) and still does not tick.
    const looked = watch!.steps;
    await pollUntil(() => watch!.steps >= looked + 3, 'three more looks at paused and the inbox');
    expect(ticks.ticks).toHaveLength(0);
    await unlink(inbox().paused);
    const tick = await pollUntil(() => ticks.ticks[0], 'a tick after unpausing');
    expect(tick.messages.join('\n')).toContain('are you there?');
    tick.finish({ failed: false, status: 'normal' });
  });

  it('wakes at a one-shot scheduled time, with the note, and removes the fired wake', async () => {
    const at = new Date(Date.now() + 1500).toISOString();
    await writeFile(inbox().schedule, JSON.stringify({ wakes: [{ at, note: 'look at the nightly build' }, { cron: '0 0 1 1 *', note: 'new year' }] }));
    await startWatch();
    await pollUntil(() => watch!.status().nextWake?.time === at, 'next wake reported');
    const tick = await pollUntil(() => ticks.ticks[0], 'a scheduled tick');
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(at));
    expect(tick.messages.join('\n')).toContain('look at the nightly build');
    const after = await pollUntil(async () => {
      const file = JSON.parse(await readFile(inbox().schedule, 'utf8')) as { wakes: unknown[] };
      return file.wakes.length === 1 ? file : undefined;
    }, 'the fired wake removed from schedule.json');
    expect(after.wakes).toEqual([{ cron: '0 0 1 1 *', note: 'new year' }]);
    tick.finish({ failed: false, status: 'normal' });
    await pollUntil(() => watch!.status().state === 'idle', 'idle');
    expect(ticks.ticks).toHaveLength(1);
  });

  it('keeps running with a broken schedule.json, says why, and still ticks on messages', async () => {
    await writeFile(inbox().schedule, JSON.stringify({ wakes: [{ cron: '99 * * * *' }] }));
    await startWatch();
    await pollUntil(() => watch!.status().reason?.includes('wakes.0.cron'), 'schedule error in status');
    expect(watch!.status().reason).toMatch(/minute field: 99 is out of range/);
    await send('still alive?');
    const tick = await pollUntil(() => ticks.ticks[0], 'a tick');
    tick.finish({ failed: false, status: 'normal' });
  });

  it('gives the next tick a crash notice after a failed tick (restart "no": waits for a message)', async () => {
    await writeConfig({ restart: 'no', backoff: { initial: '50ms', max: '200ms', reset_after: '1h' } });
    await startWatch();
    await send('go');
    const first = await pollUntil(() => ticks.ticks[0], 'first tick');
    first.finish({ failed: true, status: 'abnormal', error: 'harness exited with code 1' });
    await pollUntil(() => watch!.status().failures === 1, 'a failure recorded');
    // Watch decides several times after the failure and, with restart "no", does not tick again.
    const looked = watch!.steps;
    await pollUntil(() => watch!.steps >= looked + 3, 'three more decisions');
    expect(ticks.ticks).toHaveLength(1);
    await send('again');
    const second = await pollUntil(() => ticks.ticks[1], 'second tick');
    expect(second.messages[0]).toMatch(/tick 1 ended abnormally \(abnormal: harness exited with code 1\)/);
    expect(second.messages.join('\n')).toContain('again');
    second.finish({ failed: false, status: 'normal' });
    await pollUntil(() => watch!.status().failures === 0, 'failures reset by success');
  });

  it('restarts failed ticks with "on-failure", backing off, until max_restarts', async () => {
    await writeConfig({ restart: 'on-failure', max_restarts: 2, backoff: { initial: '50ms', max: '200ms', reset_after: '1h' } });
    ticks.autoFinish = { failed: true, status: 'abnormal', error: 'boom' };
    await startWatch();
    await send('start');
    await pollUntil(() => watch!.status().state === 'gave-up', 'gave up');
    // The first tick, then two restarts.
    expect(ticks.ticks).toHaveLength(3);
    expect(ticks.ticks[1]!.messages[0]).toMatch(/ended abnormally/);
    expect(watch!.status()).toMatchObject({ restarts: 2, failures: 3, reason: expect.stringMatching(/max_restarts \(2\) reached/) as string });
    // A message still starts a tick after giving up.
    ticks.autoFinish = { failed: false, status: 'normal' };
    await send('operator says retry');
    await pollUntil(() => ticks.ticks.length === 4, 'a tick for the message');
  });

  it('still says why it gave up after a pause in between (the reason belongs to the state it is in)', async () => {
    await writeConfig({ restart: 'on-failure', max_restarts: 1, backoff: { initial: '20ms', max: '50ms', reset_after: '1h' } });
    ticks.autoFinish = { failed: true, status: 'abnormal', error: 'boom' };
    await startWatch();
    await send('start');
    await pollUntil(() => watch!.status().state === 'gave-up', 'gave up');
    await writeFile(inbox().paused, 'billing problem: fix the card\n');
    await pollUntil(() => watch!.status().state === 'paused', 'paused');
    expect(watch!.status()).toMatchObject({ paused: true, reason: 'billing problem: fix the card' });
    await unlink(inbox().paused);
    await pollUntil(() => watch!.status().state === 'gave-up', 'gave up again once resumed');
    expect(watch!.status()).toMatchObject({ paused: false, reason: expect.stringMatching(/max_restarts \(1\) reached/) as string });
  });

  it('starts no tick once stopped, even when the stop comes while it is deciding to start one', async () => {
    await send('work that arrived before watch started');
    const logger = createLogger({ process: 'watch-loop', logDir: unitPaths('loop', dataDir).logs, stderr: false });
    let stopping: Promise<void> | undefined;
    watch = new Watch(await loadInstance(), {
      startTick: ticks.start,
      // The stop lands inside the step, after it began and before it reads the message.
      loadInstance: async () => {
        const instance = await loadInstance();
        stopping ??= watch!.stop();
        return instance;
      },
      logger,
      pollMs: 100,
      env: { AGENT_KERNEL_CONFIG_DIR: configDir },
    });
    await watch.start();
    await pollUntil(() => stopping !== undefined, 'the stop requested');
    const deadline = new Promise<string>((resolve) => setTimeout(() => resolve('still running after 5 s'), 5000).unref());
    const outcome = await Promise.race([stopping!.then(() => 'stopped'), deadline]);
    // A tick started anyway would never be told to stop: end it, so that the test ends.
    for (const tick of ticks.ticks) tick.finish({ failed: false, status: 'normal' });
    expect(outcome).toBe('stopped');
    expect(ticks.ticks).toHaveLength(0);
    expect(watch.status()).toMatchObject({ state: 'stopping', running: false });
  });

  it('keeps ticking with "always" until max_restarts', async () => {
    await writeConfig({ restart: 'always', max_restarts: 3, backoff: { initial: '50ms', max: '200ms', reset_after: '1h' } });
    ticks.autoFinish = { failed: false, status: 'normal' };
    await startWatch();
    await send('start');
    await pollUntil(() => watch!.status().state === 'gave-up', 'gave up');
    expect(ticks.ticks).toHaveLength(4);
    expect(ticks.ticks[1]!.messages[0]).toMatch(/Restarted by the restart policy/);
  });

  it('with "always", healthy ticks go on past max_restarts: the count resets after reset_after', async () => {
    await writeConfig({ restart: 'always', max_restarts: 2, backoff: { initial: '20ms', max: '200ms', reset_after: '300ms' } });
    ticks.autoFinish = { failed: false, status: 'normal' };
    await startWatch();
    await send('start');
    await pollUntil(() => ticks.ticks.length >= 8, 'eight ticks');
  });

  it('recovers after giving up: once reset_after passes without a failure, restarts resume', async () => {
    await writeConfig({ restart: 'on-failure', max_restarts: 1, backoff: { initial: '20ms', max: '50ms', reset_after: '400ms' } });
    ticks.autoFinish = { failed: true, status: 'abnormal', error: 'boom' };
    await startWatch();
    await send('start');
    await pollUntil(() => watch!.status().state === 'gave-up', 'gave up');
    expect(ticks.ticks).toHaveLength(2);
    ticks.autoFinish = { failed: false, status: 'normal' };
    const restarted = await pollUntil(() => ticks.ticks[2], 'a restart once the counters reset');
    expect(restarted.messages[0]).toMatch(/ended abnormally/);
    await pollUntil(() => watch!.status().state === 'idle', 'idle after a healthy tick');
    expect(watch!.status()).toMatchObject({ restarts: 1, failures: 0 });
  });

  it('does not restart with "no" after a runner died mid-tick, but tells the next tick', async () => {
    await writeConfig({ restart: 'no' });
    await startWatch({ detect: 'Notice: the runner died during tick 7.' });
    await pollUntil(() => watch!.steps >= 3, 'three decisions');
    expect(ticks.ticks).toHaveLength(0);
    await send('hello');
    const tick = await pollUntil(() => ticks.ticks[0], 'a tick');
    expect(tick.messages[0]).toBe('Notice from kernel-runner:\n| Notice: the runner died during tick 7.');
  });

  it('restarts at once with "on-failure" after a runner died mid-tick', async () => {
    await startWatch({ detect: 'Notice: the runner died during tick 7.' });
    const tick = await pollUntil(() => ticks.ticks[0], 'a restart tick');
    expect(tick.messages).toEqual(['Notice from kernel-runner:\n| Notice: the runner died during tick 7.']);
    expect(watch!.status().currentTick?.trigger).toBe('restart');
  });

  it('re-reads the configuration before each tick (env changes apply without restarting watch)', async () => {
    await writeConfig({ env: { MODE: 'one' } });
    ticks.autoFinish = { failed: false, status: 'normal' };
    await startWatch();
    await send('a');
    await pollUntil(() => ticks.ticks[0], 'tick 1');
    expect(ticks.ticks[0]!.env.MODE).toBe('one');
    await writeConfig({ env: { MODE: 'two' } });
    await send('b');
    await pollUntil(() => ticks.ticks[1], 'tick 2');
    expect(ticks.ticks[1]!.env.MODE).toBe('two');
  });

  it('waits out a broken configuration without dying, then ticks once it is fixed', async () => {
    await startWatch();
    await writeConfig({ restart: 'sometimes' });
    await pollUntil(() => watch!.status().state === 'config-error' && /runner\.restart/.test(watch!.status().reason ?? ''), 'config error naming the field');
    await send('queued');
    const looked = watch!.steps;
    await pollUntil(() => watch!.steps >= looked + 3, 'three more looks at the broken config');
    expect(ticks.ticks).toHaveLength(0);
    await writeConfig({});
    const tick = await pollUntil(() => ticks.ticks[0], 'a tick after the fix');
    expect(tick.messages.join('\n')).toContain('queued');
  });

  it('passes secrets to the tick environment, runner.env wins, and never logs the values', async () => {
    const secrets = path.join(configDir, 'secrets', 'loop');
    await mkdir(secrets, { recursive: true });
    await writeFile(path.join(secrets, 'API_TOKEN'), 'tok-very-secret-1234\n');
    await writeFile(path.join(secrets, 'OVERRIDDEN'), 'from-secret-file\n');
    await writeFile(path.join(secrets, '.ignored'), 'x');
    await writeFile(path.join(secrets, 'PIN'), 'q7#Zk\n');
    await writeConfig({ env: { OVERRIDDEN: 'from-config' } });
    await startWatch();
    await send('use tok-very-secret-1234 please');
    const tick = await pollUntil(() => ticks.ticks[0], 'a tick');
    // A value too short to redact reliably is refused: never handed over, never logged.
    expect(tick.env).toEqual({ API_TOKEN: 'tok-very-secret-1234', OVERRIDDEN: 'from-config' });
    watch!.log.info({ leaked: tick.env.API_TOKEN }, 'a log line that carries the secret');
    tick.finish({ failed: false, status: 'normal' });
    const logs = await readdir(inbox().logs);
    const text = (await Promise.all(logs.filter((f) => f.endsWith('.log')).map((f) => readFile(path.join(inbox().logs, f), 'utf8')))).join('');
    expect(text).toContain('a log line that carries the secret');
    expect(text).toContain('[REDACTED]');
    expect(text).not.toContain('tok-very-secret-1234');
    expect(text).toMatch(/secret file skipped: .*shorter than 6 characters/);
    expect(text).not.toContain('q7#Zk');
  });

  it('stops a running tick when watch stops', async () => {
    await startWatch();
    await send('long job');
    const tick = await pollUntil(() => ticks.ticks[0], 'a tick');
    await watch!.stop();
    expect(tick.signal.aborted).toBe(true);
    expect(watch!.status().lastResult?.status).toBe('interrupted');
  });
});

describe('watch loop: usage limits', () => {
  it('waits out a usage limit the tick reported (retryAfterMs) before the next tick, even for a message', async () => {
    await writeConfig({ restart: 'no', backoff: { initial: '10ms', max: '20ms', reset_after: '1h' } });
    await startWatch();
    await send('first');
    const first = await pollUntil(() => ticks.ticks[0], 'first tick');
    first.finish({ failed: true, status: 'failed (rate_limit)', error: 'usage limit reached', retryAfterMs: 1500 });
    await pollUntil(() => watch!.status().lastResult !== undefined, 'first tick recorded');
    const ended = Date.parse(watch!.status().lastResult!.ended);
    await send('second');
    await pollUntil(() => watch!.status().state === 'backoff', 'backing off');
    const second = await pollUntil(() => ticks.ticks[1], 'second tick after the limit', { timeoutMs: 10_000 });
    expect(Date.now()).toBeGreaterThanOrEqual(ended + 1500);
    second.finish({ failed: false, status: 'ok' });
  });
});
