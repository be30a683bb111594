import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { instancePaths } from '../../../../src/config/paths.js';
import { registerInstance } from '../../../../src/config/registry.js';
import { createLogger } from '../../../../src/log/logger.js';
import { readEvents } from '../../../../src/observe/events/event-log.js';
import { readRecords } from '../../../../src/mail/mail-store.js';
import { loadState } from '../../../../src/state/runner-state.js';
import { type RunningWatch, runWatch } from '../../../../src/runner/watch/run-watch.js';
import { queryStatusSocket, statusSocketPath } from '../../../../src/runner/watch/service/status-api.js';
import { openSandbox } from '../../../../src/sandbox/container/open-sandbox.js';
import { describeWithEngine } from '../../../helpers/engine.js';
import { KERNEL_RUNNER_BIN, type TickTestInstance, tickTestInstance } from '../tick-helpers.js';
import { pollUntil } from '../../../helpers/poll.js';
import { withTestBases } from '../../../helpers/test-instance.js';

const run = promisify(execFile);
/** Polls for ticks: generous, the machine is shared; nothing here is timed. */
const LONG = 240_000;

/**
 * Two real instances, each under its own `watch`, with the fake Claude Code playing both
 * models in real containers: A asks B from its terminal (ak-mail ask), B's tick gets the
 * question stamped from A, B answers from its terminal (ak-mail reply), and A's next tick gets
 * the answer with the question it answers.
 */
describeWithEngine('the post office between two instances under watch', () => {
  const instances: TickTestInstance[] = [];
  const watches: RunningWatch[] = [];

  afterEach(async () => {
    for (const w of watches.splice(0)) await w.stop();
    for (const t of instances.splice(0)) await t.dispose();
  });

  async function sessionLog(t: TickTestInstance, tick: number): Promise<string> {
    return readFile(t.instance.paths.tickLog(tick).replace(/\.jsonl$/, '.session.jsonl'), 'utf8').catch(() => '');
  }

  /** The first user message of a tick (the prompt with its messages), as the model got it. */
  async function promptOf(t: TickTestInstance, tick: number): Promise<string> {
    for (const line of (await sessionLog(t, tick)).split('\n')) {
      if (!line.includes('"isReplay":true')) continue;
      const event = JSON.parse(line) as { message?: { content?: unknown } };
      if (typeof event.message?.content === 'string') return event.message.content;
    }
    return '';
  }

  it('a message whose tick fails before the model runs stays queued and is delivered in the next successful tick, once, marked redelivered', { timeout: 600_000 }, async () => {
    // The first session's API calls all fail (529s, no retry left in the tick): the model never has the prompt.
    const t = await tickTestInstance({ retry: { max_attempts: 1, initial: '200ms', max: '1s' }, restart: 'on-failure', backoff: { initial: '200ms', max: '1s', reset_after: '1h' }, limits: { min_interval: '0s' } });
    instances.push(t);
    const env = { ...t.env, FAKE_CLAUDE_SCENARIO: 'storm529', FAKE_CLAUDE_FAIL_TIMES: '1' };
    watches.push(await runWatch(t.name, { env, pollMs: 250, logger: createLogger({ process: 'watch', logDir: t.instance.paths.logs, stderr: false }) }));
    const sent = await run(process.execPath, [KERNEL_RUNNER_BIN, 'send', t.name, 'Deploy once the build is green.'], { env });
    const id = /^(m-\S+):/.exec(sent.stdout)![1]!;
    await pollUntil(async () => (await loadState(t.instance.paths.state)).last?.tick === 2, 'the tick after the failed one', { timeoutMs: LONG });
    const state = await loadState(t.instance.paths.state);
    expect(state.history.map((h) => h.status)).toEqual(['failed', 'ok']);
    // Tick 1 had it in its prompt; its model never did.
    expect(await promptOf(t, 1)).toContain('| Deploy once the build is green.');
    const second = await promptOf(t, 2);
    expect(second).toContain('Redelivered: tick 1 ended before you had read it.');
    expect(second).toContain('| Deploy once the build is green.');
    const [record] = (await readRecords(t.instance.paths.mail.delivered)).records;
    expect(record).toMatchObject({ id, handed: [1], delivered: { tick: 2 } });
    expect((await readRecords(t.instance.paths.mail.queue)).total).toBe(0);
    const deliveries = (await readEvents(t.instance.paths.events)).events.filter((e) => e.type === 'message.delivered');
    expect(deliveries).toEqual([expect.objectContaining({ id, redelivered: 1, tick: 2 })]);
  });

  it('a flood: A\'s container writes messages to B and notes to itself as fast as it can for 60 s; ticks stay within the limits, nothing is lost, watch keeps answering', { timeout: 900_000 }, async () => {
    const a = await tickTestInstance({}, {});
    const b = await tickTestInstance({}, {});
    instances.push(a, b);
    const limits = { min_interval: '15s', ticks_per_hour: 4 };
    const config = (mail: Record<string, unknown>) => ({
      container: { network: 'none' },
      runner: { command: path.resolve('test/fixtures/fake-claude/bin/claude'), retry: { max_attempts: 3, initial: '200ms', max: '1s' }, idle_timeout: '60s', limits },
      mail,
    });
    await registerInstance(b.name, b.dataDir, a.env);
    await writeFile(instancePaths(a.name, a.dataDir, a.env).operatorConfig, JSON.stringify(withTestBases(config({ send_to: [b.name], send_per_minute: 120 }))));
    await writeFile(instancePaths(b.name, b.dataDir, a.env).operatorConfig, JSON.stringify(withTestBases(config({ accept_from: [a.name] }))));
    for (const t of [a, b]) watches.push(await runWatch(t.name, { env: a.env, pollMs: 250, logger: createLogger({ process: `watch-${t.name}`, logDir: t.instance.paths.logs, stderr: false }) }));
    const sandbox = await openSandbox(a.instance, { logger: createLogger({ process: 'flood', stderr: false, level: 'silent' }) });

    // The status API of both watches, asked every 250 ms during the flood: the slowest answer.
    let slowest = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        for (const t of [a, b]) {
          const began = Date.now();
          const answer = await queryStatusSocket(statusSocketPath(t.name, a.env), `/v1/agents/${t.name}`, 10_000);
          expect(answer.status).toBe(200);
          slowest = Math.max(slowest, Date.now() - began);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const d = a.dataDir;
    const flood = await sandbox.run([
      'sh',
      '-c',
      `mkdir -p '${d}/outbox' '${d}/inbox'; end=$(( $(date +%s) + 60 )); i=0
       while [ "$(date +%s)" -lt "$end" ]; do
         n=$(printf %07d "$i")
         printf 'to: ${b.name}\n\nflood %s\n' "$n" > '${d}/outbox/.t' && mv '${d}/outbox/.t' "${d}/outbox/f$n.msg"
         printf 'note %s\n' "$n" > '${d}/inbox/.t' && mv '${d}/inbox/.t' "${d}/inbox/n$n.md"
         i=$((i + 1))
       done; echo "$i"`,
    ]);
    polling = false;
    await poller;
    const written = Number(flood.stdout.trim());
    expect(written).toBeGreaterThan(500);
    // Let the watches settle, then stop them for a still picture.
    await pollUntil(async () => ![a, b].some((t) => watches.find((w) => w.watch.status().name === t.name)!.watch.status().running), 'no tick running', { timeoutMs: LONG });
    const started = { a: (await loadState(a.instance.paths.state)).tick, b: (await loadState(b.instance.paths.state)).tick };
    for (const w of watches.splice(0)) await w.stop();

    // Ticks within the limits: at most one per 15 s of the flood (and its settling), at most 4 an hour.
    for (const n of [started.a, started.b]) expect(n).toBeLessThanOrEqual(4);
    expect(started.b).toBeGreaterThanOrEqual(1);
    // Nothing lost: every message is in B's queue or delivered, or still waits in A's outbox; once each.
    const received = [...(await readRecords(b.instance.paths.mail.queue)).records, ...(await readRecords(b.instance.paths.mail.delivered)).records]
      .sort((x, y) => x.id.localeCompare(y.id))
      .map((r) => r.text);
    const waiting = (await readdir(path.join(d, 'outbox'))).filter((n) => n.endsWith('.msg'));
    expect(new Set(received).size).toBe(received.length);
    expect(received.length + waiting.length).toBe(written);
    expect(received.length).toBeGreaterThanOrEqual(100);
    // Sent in the order written.
    expect(received.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => `flood ${String(i).padStart(7, '0')}`));
    // Every note of A's is done (its model had it) or still waits; none twice.
    const done = await readdir(path.join(d, 'inbox', 'done')).catch((): string[] => []);
    const notes = (await readdir(path.join(d, 'inbox'))).filter((n) => n.endsWith('.md'));
    expect(done.length + notes.length).toBe(written);
    expect(slowest).toBeLessThan(2000);
    console.log(`flood: ${written} messages and ${written} notes in 60 s; ticks A ${started.a}, B ${started.b}; B received ${received.length}; slowest status answer ${slowest} ms`);
  });

  it('A asks B from its terminal; B gets it stamped from A and answers; A\'s next tick gets the answer with its question', { timeout: 600_000 }, async () => {
    const a = await tickTestInstance({}, {});
    const b = await tickTestInstance({}, {});
    instances.push(a, b);
    // One host, one registry: both instances in A's config home, each with its operator's file.
    const operatorFile = (t: TickTestInstance) => instancePaths(t.name, t.dataDir, a.env).operatorConfig;
    const config = (t: TickTestInstance, env: Record<string, string>, mail: Record<string, unknown>) => ({
      container: { network: 'none' },
      runner: { command: path.resolve('test/fixtures/fake-claude/bin/claude'), retry: { max_attempts: 3, initial: '200ms', max: '1s' }, idle_timeout: '60s', env },
      mail,
    });
    await registerInstance(b.name, b.dataDir, a.env);
    await mkdir(path.dirname(operatorFile(a)), { recursive: true });
    await writeFile(operatorFile(a), JSON.stringify(withTestBases(config(a, { FAKE_CLAUDE_SCENARIO: 'mail', FAKE_CLAUDE_MAIL_ASK: `${b.name}:What is six times seven?` }, { send_to: [b.name] }))));
    await writeFile(operatorFile(b), JSON.stringify(withTestBases(config(b, { FAKE_CLAUDE_SCENARIO: 'mail' }, { accept_from: [a.name] }))));

    for (const t of [a, b]) {
      const logger = createLogger({ process: `watch-${t.name}`, logDir: t.instance.paths.logs, stderr: false });
      watches.push(await runWatch(t.name, { env: a.env, pollMs: 250, logger }));
    }
    // The operator starts it: kernel-runner send says where the message went and that a watch takes it.
    const sent = await run(process.execPath, [KERNEL_RUNNER_BIN, 'send', a.name, 'Ask', b.name, 'what six times seven is.'], { env: a.env });
    expect(sent.stdout).toMatch(new RegExp(`^m-\\S+: queued for ${a.name} in .*/private/mail/queue \\(host-private: the container cannot write there\\)\\.\\nwatch \\(pid ${process.pid}\\) is (idle|starting): it starts a tick for it now\\.\\n$`));

    // B's first tick: the question, from A, as the kernel stamped it.
    await pollUntil(async () => (await loadState(b.instance.paths.state)).last?.tick === 1, "B's tick", { timeoutMs: LONG });
    const question = (await readRecords(b.instance.paths.mail.delivered)).records[0]!;
    expect(question).toMatchObject({ from: { kind: 'agent', name: a.name }, to: b.name, text: 'What is six times seven?', expects_reply: true });
    const toB = await promptOf(b, 1);
    expect(toB).toContain(`From: agent "${a.name}" (the instance ${a.name} on this host: the kernel took it from that instance's outbox)`);
    expect(toB).toContain(`Message ${question.id}, sent ${question.sent}; it asks you for an answer.`);
    expect(toB).toContain('| What is six times seven?');

    // A's second tick: B's answer, correlated with A's question.
    await pollUntil(async () => (await loadState(a.instance.paths.state)).last?.tick === 2, "A's tick with the answer", { timeoutMs: LONG });
    const answer = (await readRecords(a.instance.paths.mail.delivered)).records.find((r) => r.reply_to === question.id)!;
    expect(answer).toMatchObject({ from: { kind: 'agent', name: b.name }, to: a.name, text: `the answer to ${question.id} is 42`, question: { id: question.id, text: 'What is six times seven?' } });
    const toA = await promptOf(a, 2);
    expect(toA).toContain(`From: agent "${b.name}"`);
    expect(toA).toContain(`It answers your message ${question.id} of ${question.sent}, in which you wrote:\n| What is six times seven?\n${b.name} wrote:\n| the answer to ${question.id} is 42`);
    // A asked once: the answer did not make it ask again.
    expect((await readRecords(a.instance.paths.mail.sent)).records).toHaveLength(1);

    // The conversation as people see it: each side's event log.
    const types = async (t: TickTestInstance) => (await readEvents(t.instance.paths.events)).events.filter((e) => e.type.startsWith('message.')).map((e) => `${e.type} ${'from' in e ? e.from : ''}`);
    expect(await types(a)).toEqual(expect.arrayContaining(['message.received operator', 'message.delivered operator', `message.sent ${a.name}`, `message.received ${b.name}`, `message.delivered ${b.name}`]));
    expect(await types(b)).toEqual(expect.arrayContaining([`message.received ${a.name}`, `message.delivered ${a.name}`, `message.sent ${b.name}`]));
    // A's terminal view of what it sent says B has read it.
    const view = await readdir(path.join(a.instance.paths.mail.view, 'sent'));
    expect(await readFile(path.join(a.instance.paths.mail.view, 'sent', view[0]!), 'utf8')).toMatch(new RegExp(`\\[${b.name} has read it \\(its tick 1\\)\\]`));
  });
});
