import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../../../src/log/logger.js';
import { containerName } from '../../../../src/sandbox/container/container.js';
import { connectEngine } from '../../../../src/sandbox/engine/engine.js';
import { loadState } from '../../../../src/state/runner-state.js';
import { readEvents } from '../../../../src/observe/events/event-log.js';
import { sendOperatorMessage } from '../../../../src/mail/operator-send.js';
import { type RunningWatch, runWatch } from '../../../../src/runner/watch/run-watch.js';
import { type AgentStatus, queryStatusSocket, statusSocketPath } from '../../../../src/runner/watch/service/status-api.js';
import { describeWithEngine } from '../../../helpers/engine.js';
import { type TickTestInstance, isAlive, survivors, tickTestInstance } from '../tick-helpers.js';
import { pollUntil } from '../../../helpers/poll.js';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const BIN = path.join(ROOT, 'dist', 'cli', 'kernel-runner.js');
/** Polls for a tick: generous, the machine is shared (containers, node start-ups); nothing here is timed. */
const LONG = 150_000;

/**
 * kernel-runner watch end to end: the real tick, the fake claude (it plays the model) talking
 * to our real MCP server in a real container, the inbox, the schedule, the status socket.
 */
describeWithEngine('kernel-runner watch with the fake claude', () => {
  let t: TickTestInstance | undefined;
  let watching: RunningWatch | undefined;
  let child: ChildProcess | undefined;

  afterEach(async () => {
    await watching?.stop();
    watching = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child!.once('exit', r));
    }
    child = undefined;
    if (t && existsSync(t.pidFile)) for (const pid of await survivors(t.pidFile)) process.kill(pid, 'SIGKILL');
    await t?.dispose();
    t = undefined;
  });

  async function watch(instance: TickTestInstance): Promise<RunningWatch> {
    const logger = createLogger({ process: `watch-${instance.name}`, logDir: instance.instance.paths.logs, stderr: false });
    watching = await runWatch(instance.name, { env: instance.env, pollMs: 250, logger });
    return watching;
  }

  async function status(instance: TickTestInstance): Promise<AgentStatus> {
    const answer = await queryStatusSocket(statusSocketPath(instance.name, instance.env), `/v1/agents/${instance.name.toUpperCase()}`);
    expect(answer.status).toBe(200);
    return answer.body as AgentStatus;
  }

  async function tickLog(instance: TickTestInstance, tick: number, session = false): Promise<string> {
    const file = instance.instance.paths.tickLog(tick);
    return readFile(session ? file.replace(/\.jsonl$/, '.session.jsonl') : file, 'utf8').catch(() => '');
  }

  async function lastTick(instance: TickTestInstance) {
    return (await loadState(instance.instance.paths.state)).last;
  }

  it('a message wakes a tick within seconds; it is delivered once the model has it, and the status API tells', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({});
    await watch(t);
    await pollUntil(async () => (await status(t!)).state === 'idle', 'watch idle');
    const { id } = await sendOperatorMessage(t.instance, { text: 'please check the build', label: 'alice' });
    await pollUntil(async () => (await status(t!)).running, 'the tick to start', { timeoutMs: 10_000 });
    await pollUntil(async () => (await lastTick(t!))?.tick === 1, 'tick 1 to end', { timeoutMs: LONG });
    expect((await lastTick(t))?.status).toBe('ok');
    expect(await tickLog(t, 1, true)).toContain('please check the build');
    expect(await readdir(t.instance.paths.mail.delivered)).toEqual([`${id}.json`]);
    await pollUntil(async () => (await status(t!)).state === 'idle', 'idle again');
    expect(await status(t)).toMatchObject({ name: t.name, running: false, paused: false, lastResult: { tick: 1, status: 'ok' }, restarts: 0 });
    expect(await survivors(t.pidFile)).toEqual([]);

    const { stdout } = await run(process.execPath, [BIN, 'status'], { env: t.env });
    expect(stdout).toContain(`${t.name}: idle (watch pid ${process.pid})\n`);
    expect(stdout).toMatch(/\n {2}last tick {5}#1 ok ended \d\d:\d\d:\d\dZ\n/);
    expect(stdout).toMatch(/\n {2}kernel {8}ready, up \S+, \d+ ttys?, \d+ MB\n/);
    // What ran is in the event log too: the watch and its kernel started.
    const kinds = (await readEvents(t.instance.paths.events)).events.map((e) => e.type);
    expect(kinds).toEqual(expect.arrayContaining(['watch.started', 'kernel.started', 'tick.started', 'tick.ended']));
  });

  it('a message that arrives during a tick reaches the running agent', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({});
    await watch(t);
    await sendOperatorMessage(t.instance, { text: '[fake:deliver] wait for news' });
    await pollUntil(async () => (await tickLog(t!, 1)).includes('mcp__agent-kernel__wait'), 'the agent to be at work', { timeoutMs: LONG });
    const { id } = await sendOperatorMessage(t.instance, { text: 'the deploy finished', label: 'ops' });
    await pollUntil(async () => (await lastTick(t!))?.tick === 1, 'tick 1 to end', { timeoutMs: LONG });
    const received = await readFile(path.join(t.dataDir, 'tmp', 'fake-claude-received.txt'), 'utf8');
    expect(received).toContain('the deploy finished');
    expect(received).toContain('From: the operator, signed "ops"');
    await pollUntil(async () => (await readdir(t!.instance.paths.mail.delivered)).includes(`${id}.json`), 'the message delivered');
    // Delivered mid-tick: no second tick for it.
    expect((await loadState(t.instance.paths.state)).tick).toBe(1);
  });

  it('a scheduled wake starts a tick at its time, with its note, and is then removed', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({});
    const at = new Date(Date.now() + 4000).toISOString();
    await writeFile(t.instance.paths.schedule, JSON.stringify({ wakes: [{ at, note: 'look at the nightly report' }] }));
    await watch(t);
    await pollUntil(async () => (await status(t!)).nextWake !== undefined, 'the next wake known');
    expect((await status(t)).nextWake).toEqual({ time: at, reason: `at ${at}: look at the nightly report` });
    await pollUntil(async () => (await lastTick(t!))?.tick === 1, 'the scheduled tick', { timeoutMs: LONG });
    const tick = await lastTick(t);
    expect(Date.parse(tick!.started)).toBeGreaterThanOrEqual(Date.parse(at));
    expect(await tickLog(t, 1, true)).toContain('look at the nightly report');
    expect(JSON.parse(await readFile(t.instance.paths.schedule, 'utf8'))).toEqual({ wakes: [] });
  });

  it('paused means no tick; removing system/paused resumes', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({});
    await writeFile(t.instance.paths.paused, 'Invalid API key: fix the secret\n');
    await watch(t);
    await sendOperatorMessage(t.instance, { text: 'anyone home?' });
    await pollUntil(async () => (await status(t!)).pendingMessages === 1, 'the message seen while paused');
    expect(await status(t)).toMatchObject({ state: 'paused', paused: true, reason: 'Invalid API key: fix the secret' });
    // Five more looks at paused and the inbox: still no tick.
    const looked = watching!.watch.steps;
    await pollUntil(() => watching!.watch.steps >= looked + 5, 'five more looks while paused');
    expect((await loadState(t.instance.paths.state)).tick).toBe(0);
    await unlink(t.instance.paths.paused);
    await pollUntil(async () => (await lastTick(t!))?.tick === 1, 'a tick after resuming', { timeoutMs: LONG });
    expect(await tickLog(t, 1, true)).toContain('anyone home?');
  });

  it('a tick that pauses the instance is logged as paused, not as a restart that never comes', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'not-logged-in' }, restart: 'on-failure', backoff: { initial: '200ms', max: '1s', reset_after: '1h' } });
    await watch(t);
    await sendOperatorMessage(t.instance, { text: 'hello' });
    await pollUntil(async () => (await status(t!)).state === 'paused', 'watch paused by the fatal tick', { timeoutMs: LONG });
    const log = await readFile(path.join(t.instance.paths.logs, `watch-${t.name}.log`), 'utf8');
    const ended = log.split('\n').filter((line) => line.includes('"msg":"tick ended ('));
    expect(ended).toHaveLength(1);
    expect(ended[0]).toContain(`tick ended (failed (fatal)); instance paused: no tick until kernel-runner resume ${t.name}`);
    expect(log).not.toMatch(/restart 1 in/);
    // Five more looks at paused and the restart policy: no restart tick while paused.
    const looked = watching!.watch.steps;
    await pollUntil(() => watching!.watch.steps >= looked + 5, 'five more looks while paused');
    expect((await loadState(t.instance.paths.state)).tick).toBe(1);
  });

  it('a pause after a fatal tick is the operator\'s: rm system/paused from inside the container starts no tick; kernel-runner resume does', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'not-logged-in' } });
    await watch(t);
    await sendOperatorMessage(t.instance, { text: 'hello' });
    await pollUntil(async () => (await status(t!)).state === 'paused', 'watch paused by the fatal tick', { timeoutMs: LONG });
    // The agent, root in its container, removes the view of its pause and asks for a tick.
    const engine = await connectEngine();
    const exec = await engine.docker.getContainer(containerName(t.name)).exec({ Cmd: ['rm', '-f', t.instance.paths.paused], AttachStdout: true, AttachStderr: true });
    const stream = await exec.start({});
    await new Promise((resolve) => stream.on('end', resolve).resume());
    expect((await exec.inspect()).ExitCode).toBe(0);
    expect(existsSync(t.instance.paths.paused)).toBe(false);
    await sendOperatorMessage(t.instance, { text: 'tick now' });
    const looked = watching!.watch.steps;
    await pollUntil(() => watching!.watch.steps >= looked + 5, 'five more looks after the rm');
    expect((await loadState(t.instance.paths.state)).tick).toBe(1);
    expect(await status(t)).toMatchObject({ state: 'paused', paused: true });
    const { stdout } = await run(process.execPath, [BIN, 'status', t.name], { env: t.env }).catch((error: { stdout: string }) => error);
    expect(stdout).toMatch(/paused/);
    // The operator's resume is the way out (--force: the fake harness has no credentials to check).
    await run(process.execPath, [BIN, 'resume', t.name, '--force'], { env: t.env });
    await pollUntil(async () => (await lastTick(t!))?.tick === 2, 'a tick after kernel-runner resume', { timeoutMs: LONG });
  });

  it('timeout and grace end a hung tick (SIGINT ignored: the group is killed); on-failure restarts with a crash notice, up to max_restarts', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({
      env: { FAKE_CLAUDE_SCENARIO: 'hang', FAKE_CLAUDE_IGNORE_SIGINT: '1' },
      timeout: '5s',
      grace_period: '1s',
      restart: 'on-failure',
      max_restarts: 1,
      backoff: { initial: '200ms', max: '1s', reset_after: '1h' },
    });
    await watch(t);
    await sendOperatorMessage(t.instance, { text: 'start the long job' });
    await pollUntil(async () => (await status(t!)).state === 'gave-up', 'watch to give up restarting', { timeoutMs: LONG });
    const state = await loadState(t.instance.paths.state);
    expect(state.tick).toBe(2);
    expect(state.history.map((h) => [h.tick, h.status, h.error_class])).toEqual([
      [1, 'interrupted', 'timeout'],
      [2, 'interrupted', 'timeout'],
    ]);
    expect(await tickLog(t, 2, true)).toMatch(/tick 1 ended abnormally \(interrupted \(timeout\): the tick ran past its time limit/);
    expect(await status(t)).toMatchObject({ restarts: 1, failures: 2, reason: expect.stringMatching(/max_restarts \(1\) reached/) as string });
    expect(await survivors(t.pidFile)).toEqual([]);
  });

  it('passes secrets to the harness environment (runner.env wins), never logs them; custom harness end to end', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({
      harness: 'custom',
      command: `sh -c 'mkdir -p tmp; printf %s "$API_TOKEN" > tmp/seen-token; printf %s "$OVERRIDDEN" > tmp/seen-override; echo "custom agent ran"'`,
      env: { OVERRIDDEN: 'from-config' },
    });
    const secrets = path.join(t.env.AGENT_KERNEL_CONFIG_DIR!, 'secrets', t.name);
    await mkdir(secrets, { recursive: true });
    await writeFile(path.join(secrets, 'API_TOKEN'), 'tok-e2e-secret-98765\n');
    await writeFile(path.join(secrets, 'OVERRIDDEN'), 'from-secret\n');
    await writeFile(path.join(secrets, '.not-me'), 'hidden\n');
    await watch(t);
    await sendOperatorMessage(t.instance, { text: 'go' });
    await pollUntil(async () => (await lastTick(t!))?.tick === 1, 'the custom tick', { timeoutMs: LONG });
    // It never started our MCP server: a tick without the kernel's tools is a failed one (the command still ran).
    expect(await lastTick(t)).toMatchObject({ status: 'failed', error_class: 'mcp' });
    // It ran in its host-private folder, not in the data repo.
    const ranIn = t.instance.paths.harnessCwd;
    expect(await readFile(path.join(ranIn, 'tmp', 'seen-token'), 'utf8')).toBe('tok-e2e-secret-98765');
    expect(await readFile(path.join(ranIn, 'tmp', 'seen-override'), 'utf8')).toBe('from-config');
    expect(await tickLog(t, 1)).toContain('custom agent ran');
    watching!.logger.info({ env: { API_TOKEN: 'tok-e2e-secret-98765' } }, 'logging the secret by mistake');
    const logs = t.instance.paths.logs;
    const text = (await Promise.all((await readdir(logs)).filter((f) => f.endsWith('.log')).map((f) => readFile(path.join(logs, f), 'utf8')))).join('');
    expect(text).toContain('logging the secret by mistake');
    expect(text).not.toContain('tok-e2e-secret-98765');
  });

  it('as a process: SIGKILL mid-tick gives the next watch a crash notice and a restart; SIGTERM stops a tick gracefully', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({ grace_period: '2s' });
    const socket = statusSocketPath(t.name, t.env);
    const start = () => {
      const proc = spawn(process.execPath, [BIN, 'watch', t!.name], { env: t!.env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      return { proc, stderr: () => stderr };
    };
    let w = start();
    child = w.proc;
    await pollUntil(async () => (await queryStatusSocket(socket, '/v1/health').catch(() => undefined))?.status === 200, 'the status socket', { timeoutMs: 20_000 });
    const { id } = await sendOperatorMessage(t.instance, { text: '[fake:hang] a job that never ends' });
    await pollUntil(async () => (await tickLog(t!, 1)).includes('mcp__agent-kernel__login'), 'the agent at work', { timeoutMs: LONG });
    // Its model has the message: the restart does not get it again.
    await pollUntil(async () => (await readdir(t!.instance.paths.mail.delivered).catch((): string[] => [])).includes(`${id}.json`), 'the message delivered', { timeoutMs: LONG });

    // The runner dies hard. (Under systemd the unit's cgroup is killed with it; here, by hand.)
    w.proc.kill('SIGKILL');
    await new Promise((r) => w.proc.once('exit', r));
    for (const pid of await survivors(t.pidFile)) process.kill(pid, 'SIGKILL');
    expect((await loadState(t.instance.paths.state)).current?.tick).toBe(1);

    w = start();
    child = w.proc;
    await pollUntil(async () => (await lastTick(t!))?.tick === 2, 'the restart tick', { timeoutMs: LONG });
    expect((await lastTick(t))?.status).toBe('ok');
    expect(await tickLog(t, 2, true)).toMatch(/the runner died during tick 1/);

    // Graceful stop in the middle of a tick.
    await sendOperatorMessage(t.instance, { text: '[fake:hang] another endless job' });
    await pollUntil(async () => (await tickLog(t!, 3)).includes('mcp__agent-kernel__login'), 'tick 3 at work', { timeoutMs: LONG });
    const exited = new Promise<number | null>((r) => w.proc.once('exit', (code) => r(code)));
    w.proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(w.stderr()).toContain('watch stopped');
    const three = (await loadState(t.instance.paths.state)).history.find((h) => h.tick === 3);
    expect(three).toMatchObject({ status: 'interrupted', error_class: 'aborted' });
    expect(await survivors(t.pidFile)).toEqual([]);
    expect(existsSync(socket)).toBe(false);
    const pid = w.proc.pid!;
    expect(isAlive(pid)).toBe(false);
  });

  it('refuses to start when the harness binary is missing, naming it', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({ command: '/nonexistent/claude' });
    await expect(runWatch(t.name, { env: t.env })).rejects.toThrow(/needs "\/nonexistent\/claude", which is not an executable file/);
    const result = await run(process.execPath, [BIN, 'watch', t.name], { env: t.env }).catch((e: { code: number; stderr: string }) => e);
    expect(result).toMatchObject({ code: 3 });
    expect((result as { stderr: string }).stderr).toMatch(/HARNESS|harness needs/);
    expect(existsSync(statusSocketPath(t.name, t.env))).toBe(false);
  });
});

