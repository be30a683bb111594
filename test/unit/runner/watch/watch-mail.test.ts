import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Instance, loadInstance as loadInstanceOf } from '../../../../src/config/instance.js';
import { instancePaths } from '../../../../src/config/paths.js';
import { createLogger } from '../../../../src/log/logger.js';
import { readEvents } from '../../../../src/observe/events/event-log.js';
import { newMessageId } from '../../../../src/mail/mail-record.js';
import { enqueue } from '../../../../src/mail/mail-store.js';
import { sendOperatorMessage } from '../../../../src/mail/operator-send.js';
import { Watch } from '../../../../src/runner/watch/watch.js';
import { TickRecorder } from './fake-ticks.js';
import { pollUntil } from '../../../helpers/poll.js';

/**
 * Watch and the post office's queue with an injected tick: messages are delivered only once the
 * "model" has them, a tick that ends before that leaves them queued and the next says they are
 * redelivered, and the operator's limits hold ticks back without dropping anything.
 */

let root: string;
let dataDir: string;
let watch: Watch | undefined;
let ticks: TickRecorder;

const env = () => ({ AGENT_KERNEL_CONFIG_DIR: path.join(root, 'config'), AGENT_KERNEL_STATE_DIR: path.join(root, 'state') });
const paths = () => instancePaths('mail', dataDir, env());
const loadInstance = (): Promise<Instance> => loadInstanceOf('mail', dataDir, env());

async function writeConfig(runner: Record<string, unknown>, mail: Record<string, unknown> = {}): Promise<void> {
  await mkdir(path.dirname(paths().operatorConfig), { recursive: true });
  await writeFile(paths().operatorConfig, JSON.stringify({ runner: { restart: 'no', backoff: { initial: '20ms', max: '50ms', reset_after: '1h' }, ...runner }, mail }));
}

async function send(text: string): Promise<string> {
  return (await sendOperatorMessage({ name: 'mail', paths: paths() }, { text })).id;
}

/** A message from agent "alpha", queued as the post office stamps it (ids a millisecond apart, so they sort as sent). */
let peerClock = Date.now() - 60_000;
async function fromPeer(text: string): Promise<void> {
  peerClock += 1;
  await enqueue(paths().mail, { id: newMessageId(new Date(peerClock)), from: { kind: 'agent', name: 'alpha' }, to: 'mail', text, sent: new Date().toISOString() });
}

async function startWatch(): Promise<Watch> {
  const logger = createLogger({ process: 'watch-mail', logDir: paths().logs, stderr: false });
  watch = new Watch(await loadInstance(), { startTick: ticks.start, loadInstance, logger, pollMs: 100, env: env() });
  await watch.start();
  return watch;
}

const delivered = () => readdir(paths().mail.delivered).catch((): string[] => []);
const queued = () => readdir(paths().mail.queue).then((names) => names.filter((n) => n.endsWith('.json')));

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'watch-mail-'));
  dataDir = path.join(root, 'data');
  await mkdir(path.join(dataDir, 'system'), { recursive: true });
  ticks = new TickRecorder();
});

afterEach(async () => {
  await watch?.stop();
  watch = undefined;
  await rm(root, { recursive: true, force: true });
});

describe('messages reach the model once', () => {
  it('a tick that fails before its model runs leaves the message queued; the next tick gets it, marked redelivered, and it is delivered once', async () => {
    await writeConfig({ limits: { min_interval: '0s' } });
    ticks.modelReads = false;
    await startWatch();
    const id = await send('deploy when the build is green');
    const first = await pollUntil(() => ticks.ticks[0], 'tick 1');
    expect(first.messages.join('\n')).toContain('| deploy when the build is green');
    // Tick 1's model never read (it decided at its start); the next tick's will.
    ticks.modelReads = true;
    first.finish({ failed: true, status: 'failed (fatal)', error: 'Not logged in', tick: 1 });
    // It stayed queued: tick 2 gets it again, marked redelivered (tick 2 may already have it by now).

    const second = await pollUntil(() => ticks.ticks[1], 'tick 2 for the message still queued');
    const text = second.messages.join('\n');
    expect(text).toContain('| deploy when the build is green');
    expect(text).toContain('Redelivered: tick 1 ended before you had read it.');
    await pollUntil(() => second.read, "tick 2's model has read it");
    second.finish({ failed: false, status: 'ok', tick: 2 });
    await pollUntil(async () => (await delivered()).length === 1 && (await queued()).length === 0, 'delivered, and out of the queue');
    // Once: no third tick for it, one delivery in the event log.
    await pollUntil(() => watch!.status().state === 'idle', 'idle');
    const looked = watch!.steps;
    await pollUntil(() => watch!.steps >= looked + 3, 'three more looks');
    expect(ticks.ticks).toHaveLength(2);
    const events = (await readEvents(paths().events)).events.filter((e) => e.type === 'message.delivered');
    expect(events).toEqual([expect.objectContaining({ id, from: 'operator', to: 'mail', redelivered: 1, tick: 2 })]);
  });

  it('a message handed to a running tick whose model never takes it waits for the next tick', async () => {
    await writeConfig({ limits: { min_interval: '0s' } });
    await startWatch();
    await send('first');
    const first = await pollUntil(() => ticks.ticks[0], 'tick 1');
    ticks.modelReads = false;
    // Its model takes nothing more: what comes now is handed over, never read.
    await send('arrived late');
    await pollUntil(() => first.delivered.length === 1, 'handed mid-tick');
    first.finish({ failed: false, status: 'ok', tick: 1 });
    await pollUntil(() => watch!.status().lastResult?.tick === 1, 'tick 1 ended');
    ticks.modelReads = true;
    const second = await pollUntil(() => ticks.ticks[1], 'tick 2');
    expect(second.messages.join('\n')).toMatch(/Redelivered: tick 1 ended before you had read it\.\n.*\n\| arrived late/s);
    second.finish({ failed: false, status: 'ok', tick: 2 });
  });

  it('hands a tick at most mail.max_per_tick messages of peers; the rest go to the next ticks, in order, none lost', async () => {
    await writeConfig({ limits: { min_interval: '0s' } }, { max_per_tick: 4 });
    for (let i = 0; i < 10; i++) await fromPeer(`message ${String(i).padStart(2, '0')}`);
    ticks.autoFinish = { failed: false, status: 'ok' };
    await startWatch();
    await pollUntil(async () => (await delivered()).length === 10, 'all ten delivered');
    const seen = ticks.ticks.flatMap((t) => [...t.messages, ...t.delivered].flatMap((m) => [...m.matchAll(/\| (message \d\d)/g)].map((x) => x[1])));
    expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => `message ${String(i).padStart(2, '0')}`));
    expect(ticks.ticks.map((t) => t.messages.length)).toEqual([4, 4, 2]);
  });
});

describe("the operator's word first", () => {
  it('a 25-message flood from a peer still lets the operator\'s message into the next tick; mail.max_per_tick counts the peer\'s only', async () => {
    await writeConfig({ limits: { min_interval: '0s' } }, { max_per_tick: 20 });
    // As the post office stamps them: 25 messages from agent "alpha", all older than the operator's.
    for (let i = 0; i < 25; i++) await fromPeer(`flood ${String(i).padStart(2, '0')}`);
    await send('stop the deploy');
    ticks.modelReads = false;
    await startWatch();
    const first = await pollUntil(() => ticks.ticks[0], 'tick 1');
    const text = first.messages.join('\n');
    expect(text).toContain('| stop the deploy');
    expect(text.indexOf('| stop the deploy')).toBeLessThan(text.indexOf('| flood 00'));
    expect([...text.matchAll(/\| flood \d\d/g)]).toHaveLength(20);
    first.finish({ failed: false, status: 'ok', tick: 1 });
  });
});

describe("the operator's limits", () => {
  it('holds a tick back for min_interval, says so in status and the event log, and then delivers', async () => {
    await writeConfig({ limits: { min_interval: '1500ms' } });
    ticks.autoFinish = { failed: false, status: 'ok' };
    await startWatch();
    await send('one');
    await pollUntil(() => ticks.ticks.length === 1, 'tick 1');
    const started = Date.now();
    await pollUntil(() => watch!.status().state !== 'ticking', 'tick 1 over');
    await send('two');
    await pollUntil(() => watch!.status().state === 'limited', 'held by the limit');
    expect(watch!.status().reason).toMatch(/^runner\.limits\.min_interval \(2s\) since the last tick started/);
    expect(watch!.status().pendingMessages).toBe(1);
    await pollUntil(() => ticks.ticks.length === 2, 'tick 2 once the interval passed', { timeoutMs: 10_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(ticks.ticks[1]!.messages.join('\n')).toContain('| two');
    const limited = (await readEvents(paths().events)).events.filter((e) => e.type === 'tick.limited');
    expect(limited).toEqual([expect.objectContaining({ limit: 'min_interval', waiting: 1 })]);
  });

  it('stops at ticks_per_hour: further messages wait in the queue, counted, not dropped', async () => {
    await writeConfig({ limits: { min_interval: '0s', ticks_per_hour: 2 } });
    ticks.autoFinish = { failed: false, status: 'ok' };
    await startWatch();
    for (let i = 0; i < 3; i++) {
      await send(`m${i}`);
      await pollUntil(async () => ticks.ticks.length === Math.min(i + 1, 2) && watch!.status().state !== 'ticking', `after message ${i}`);
    }
    await pollUntil(() => watch!.status().state === 'limited', 'limited');
    expect(watch!.status()).toMatchObject({ pendingMessages: 1, reason: expect.stringMatching(/ticks_per_hour \(2\) reached: 2 ticks started in the last hour/) as string });
    const looked = watch!.steps;
    await pollUntil(() => watch!.steps >= looked + 2, 'two more looks');
    expect(ticks.ticks).toHaveLength(2);
    expect(await queued()).toHaveLength(1);
  });

  it('stops at the daily budget, counting what the ticks of the last day cost (state.json)', async () => {
    await writeConfig({ limits: { min_interval: '0s', daily_budget_usd: 1 } });
    const started = new Date(Date.now() - 3_600_000).toISOString();
    await mkdir(paths().privateState, { recursive: true });
    await writeFile(paths().state, JSON.stringify({ tick: 1, history: [{ tick: 1, started, status: 'ok', cost_usd: 1.25 }], last: { tick: 1, started, status: 'ok', cost_usd: 1.25 } }));
    await startWatch();
    await send('expensive');
    await pollUntil(() => watch!.status().state === 'limited', 'limited by the budget');
    expect(watch!.status().reason).toMatch(/daily_budget_usd \(\$1\.00\) reached: ticks of the last 24 hours cost \$1\.25/);
    expect(ticks.ticks).toHaveLength(0);
  });

  it('a flood of notes the container drops into inbox/ starts no more ticks than the limits allow, and every note is delivered or still waits', async () => {
    await writeConfig({ limits: { min_interval: '400ms' } }, { max_per_tick: 50 });
    ticks.autoFinish = { failed: false, status: 'ok' };
    await startWatch();
    const inbox = path.join(dataDir, 'inbox');
    await mkdir(inbox, { recursive: true });
    const began = Date.now();
    let written = 0;
    while (Date.now() - began < 3000) {
      await writeFile(path.join(inbox, `.n${written}.tmp`), `note ${written}`);
      await import('node:fs/promises').then((fs) => fs.rename(path.join(inbox, `.n${written}.tmp`), path.join(inbox, `n${String(written).padStart(6, '0')}.md`)));
      written++;
    }
    const elapsed = Date.now() - began;
    // Starts at least 400 ms apart: at most one more than the flood's length allows.
    expect(ticks.ticks.length).toBeLessThanOrEqual(Math.floor(elapsed / 400) + 1);
    await pollUntil(() => watch!.status().state !== 'ticking', 'the last tick over');
    const handed = ticks.ticks.flatMap((t) => [...t.messages, ...t.delivered]).flatMap((m) => [...m.matchAll(/^\| (note \d+)$/gm)].map((x) => x[1]));
    // The last tick's notes are moved to done/ as watch settles its mail, just after the tick leaves 'ticking'.
    const doneNotes = async () => readdir(path.join(inbox, 'done')).catch((): string[] => []);
    await pollUntil(async () => (await doneNotes()).length >= handed.length, 'the handed notes moved to done/', { timeoutMs: 10_000 }).catch(() => undefined);
    const done = await doneNotes();
    const waiting = (await readdir(inbox)).filter((n) => n.endsWith('.md'));
    expect(done.length + waiting.length).toBe(written);
    expect(new Set([...done, ...waiting]).size).toBe(written);
    expect(new Set(handed).size).toBe(handed.length);
    expect(handed.length).toBe(done.length);
  });
});
