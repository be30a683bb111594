import { execFile, spawn } from 'node:child_process';
import { access, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it, vi } from 'vitest';
import { isCodedError } from '../../../src/errors.js';
import { loadState } from '../../../src/state/runner-state.js';
import { containerName } from '../../../src/sandbox/container/container.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { startTick } from '../../../src/runner/tick/tick.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { AGENT_GIT_SETUP, GIT_CONTAINERFILE } from '../../helpers/git-image.js';
import { FAKE_CLAUDE, KERNEL_RUNNER_BIN, type TickTestInstance, isAlive, readJsonLines, survivors, tickTestInstance } from './tick-helpers.js';
import { pollUntil } from '../../helpers/poll.js';
import { withTestBases } from '../../helpers/test-instance.js';

// Each test starts a container and a harness; on a loaded 2-core machine that can take a while.
vi.setConfig({ testTimeout: 240_000 });

const execFileAsync = promisify(execFile);

/**
 * Ticks end to end: the fake claude (the only stand-in: it plays the model) against the real
 * MCP server, started by the harness from the generated --mcp-config, in a real container.
 */
describeWithEngine('kernel-runner tick with the fake claude', () => {
  let t: TickTestInstance | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  async function tick(instance: TickTestInstance, messages: string[] = []) {
    const running = await startTick(await instance.reloaded(), { logger: instance.logger, env: instance.env, messages });
    return running.done;
  }

  it('runs a tick: hooks, MCP tools in a terminal, transcript, state.json; nothing left running', async () => {
    t = await tickTestInstance({});
    await t.writeHook('pre-tick', '10-env', '#!/bin/sh\nenv | grep -E "^(DATA_DIR|AGENT_)" | sort > "$DATA_DIR/pre-tick.env"\n');
    await t.writeHook('post-tick', '10-env', '#!/bin/sh\nenv | grep -E "^(DATA_DIR|AGENT_)" | sort > "$DATA_DIR/post-tick.env"\n');
    await t.writeHook('post-tick', '.hidden', '#!/bin/sh\ntouch "$DATA_DIR/hidden-ran"\n');

    const outcome = await tick(t);
    expect(outcome.error).toBeUndefined();
    expect(outcome).toMatchObject({ tick: 1, status: 'ok', attempts: 1, paused: false });
    expect(outcome.lastMessage).toContain('Tick work done');
    expect(outcome.costUsd).toBeGreaterThan(0);
    expect(outcome.tokens.context_window).toBe(200_000);

    const lines = await readJsonLines(outcome.logFile);
    const init = lines.find((l) => l.type === 'system' && l.subtype === 'init');
    expect(init?.mcp_servers).toEqual([{ name: 'agent-kernel', status: 'connected' }]);
    expect(init?.tools).toEqual(expect.arrayContaining(['mcp__agent-kernel__login', 'mcp__agent-kernel__type']));
    expect(init?.tools).not.toContain('Bash');
    const toolText = JSON.stringify(lines.filter((l) => l.type === 'user'));
    expect(toolText).toContain('fake-claude-was-here');
    expect(toolText).not.toContain('permissions to use');
    // The runner's tally agrees with the stream: one tool call per tool result, the turns Claude Code counted.
    const turns = lines.filter((l) => l.type === 'result').reduce((sum, l) => sum + Number((l as { num_turns?: number }).num_turns ?? 0), 0);
    // (A user line with isReplay is Claude Code echoing the prompt it took, not a tool result.)
    expect(lines.at(-1)).toMatchObject({ type: 'kernel_runner', event: 'tick-end' });
    expect(lines.findLast((l) => l.type === 'kernel_runner' && l.event === 'attempt-end')).toMatchObject({ type: 'kernel_runner', event: 'attempt-end', tool_calls: lines.filter((l) => l.type === 'user' && l.isReplay !== true).length, turns });
    expect(turns).toBeGreaterThan(0);
    await access(outcome.logFile.replace(/\.jsonl$/, '.session.jsonl'));

    const pre = await readFile(path.join(t.dataDir, 'pre-tick.env'), 'utf8');
    expect(pre).toContain(`DATA_DIR=${t.dataDir}`);
    expect(pre).toContain('AGENT_TICK=1');
    const post = await readFile(path.join(t.dataDir, 'post-tick.env'), 'utf8');
    expect(post).toContain('AGENT_TICK_STATUS=normal');
    expect(post).toContain(`AGENT_TICK_LOG=${outcome.logFile}`);
    expect(post).toContain(`AGENT_SESSION_ID=${outcome.sessionId}`);
    expect(post).toContain('AGENT_LAST_MESSAGE=Tick work done');
    expect(post).toMatch(/AGENT_TICK_DURATION=\d+/);
    await expect(access(path.join(t.dataDir, 'hidden-ran'))).rejects.toThrow();

    // The server read the tick number from state.json: the closed terminal is archived under it.
    expect((await readdir(t.instance.paths.sessionArchive)).some((name) => name.includes('tick-001'))).toBe(true);

    const state = await loadState(t.instance.paths.state);
    expect(state).toMatchObject({ tick: 1, current: null, last: { tick: 1, status: 'ok', session_id: outcome.sessionId } });
    expect(await survivors(t.pidFile)).toEqual([]);

    const second = await tick(t);
    expect(second.tick).toBe(2);
  });

  it('blocks a stop while a non-startup terminal is open, and lets it stop once closed', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'leave-open' } });
    const outcome = await tick(t);
    expect(outcome.status).toBe('ok');
    const lines = await readJsonLines(outcome.logFile);
    const blocks = lines.filter((l) => l.event === 'pre-stop-block');
    expect(blocks).toHaveLength(1);
    expect(JSON.stringify(blocks[0]?.issues)).toMatch(/Terminal \d+ .*is still open/);
  });

  it('hands pre-stop hook lines back as blocking issues, at most 3 times', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'fix-issues' } });
    await t.writeHook('pre-stop', '10-flag', '#!/bin/sh\ntest -f "$DATA_DIR/done.flag" || echo "create done.flag"\n');
    await t.writeHook('pre-stop', '20-broken', '#!/bin/sh\necho "this line is ignored: the hook fails"\nexit 1\n');
    const fixed = await tick(t);
    expect(fixed.status).toBe('ok');
    await access(path.join(t.dataDir, 'done.flag'));
    const lines = await readJsonLines(fixed.logFile);
    expect(lines.filter((l) => l.event === 'pre-stop-block').map((l) => l.issues)).toEqual([['create done.flag']]);

    await t.writeHook('pre-stop', '30-unfixable', '#!/bin/sh\necho "the moon is not made of cheese"\n');
    const stuck = await tick(t);
    expect(stuck.status).toBe('ok');
    const stuckLines = await readJsonLines(stuck.logFile);
    expect(stuckLines.filter((l) => l.event === 'pre-stop-block')).toHaveLength(3);
    expect(stuckLines.filter((l) => l.event === 'pre-stop-gave-up')).toHaveLength(1);
  });

  it('retries a 529 storm with a fresh session and succeeds', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'storm529', FAKE_CLAUDE_FAIL_TIMES: '1' } });
    const outcome = await tick(t);
    expect(outcome).toMatchObject({ status: 'ok', attempts: 2 });
    const lines = await readJsonLines(outcome.logFile);
    expect(lines.filter((l) => l.event === 'retry-wait')).toHaveLength(1);
    expect(lines.filter((l) => l.subtype === 'api_retry').length).toBeGreaterThan(0);
  });

  it('gives up on a 529 storm after runner.retry.max_attempts, without pausing', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'storm529' }, retry: { max_attempts: 2, initial: '100ms', max: '200ms' } });
    const outcome = await tick(t);
    expect(outcome).toMatchObject({ status: 'failed', errorClass: 'transient', attempts: 2, paused: false });
    expect(outcome.error).toContain('529');
    await expect(access(t.instance.paths.paused)).rejects.toThrow();
  });

  it('waits out a usage limit until its reset time, then runs', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'rate-limit', FAKE_CLAUDE_FAIL_TIMES: '1' } });
    const outcome = await tick(t);
    expect(outcome).toMatchObject({ status: 'ok', attempts: 2 });
  });

  it('pauses the instance on a 401, says how to fix it, and refuses the next tick until it is resumed', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: '401' } });
    const outcome = await tick(t);
    expect(outcome).toMatchObject({ status: 'failed', errorClass: 'fatal', paused: true, attempts: 1 });
    expect(await readFile(t.instance.paths.paused, 'utf8')).toMatch(/^the model never ran: the model's API refused Claude Code's credentials \(it said: "Invalid API key"\)/);
    const refused = await startTick(await t.reloaded(), { logger: t.logger, env: t.env }).catch((e: unknown) => e);
    expect(isCodedError(refused, 'INSTANCE_PAUSED')).toBe(true);
    expect((refused as Error).message).toContain(`kernel-runner resume ${t.name}`);
    // The paused file carries the steps: new credentials, then resume.
    expect(await readFile(t.instance.paths.paused, 'utf8')).toContain(`Fix:\n  claude setup-token`);
    expect(outcome.fix?.at(-1)).toBe(`kernel-runner resume ${t.name}`);
    const state = await loadState(t.instance.paths.state);
    expect(state.last).toMatchObject({ tick: 1, status: 'failed', error_class: 'fatal' });
  });

  it('tells the agent to wrap up past 70% of the context', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'context' } });
    const outcome = await tick(t);
    expect(outcome.status).toBe('ok');
    expect(outcome.lastMessage).toMatch(/Wrap-up notice received: Context is 75% full/);
  });

  it('ends the tick instead of compacting: SIGINT ignored, the whole group is killed', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'compaction', FAKE_CLAUDE_IGNORE_SIGINT: '1' }, grace_period: '1s' });
    const outcome = await tick(t);
    expect(outcome).toMatchObject({ status: 'interrupted', errorClass: 'context' });
    expect(await survivors(t.pidFile)).toEqual([]);
    const post = (await loadState(t.instance.paths.state)).last;
    expect(post).toMatchObject({ status: 'interrupted', error_class: 'context' });
  });

  it('ends a silent harness with the idle watchdog', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'hang' }, idle_timeout: '3s', grace_period: '1s' });
    const outcome = await tick(t);
    expect(outcome).toMatchObject({ status: 'interrupted', errorClass: 'idle' });
    expect(await survivors(t.pidFile)).toEqual([]);
  });

  it('delivers a message to the running agent, and refuses a second tick meanwhile', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'deliver' } });
    const running = await startTick(await t.reloaded(), { logger: t.logger, env: t.env });
    const second = await startTick(await t.reloaded(), { logger: t.logger, env: t.env }).catch((e: unknown) => e);
    expect(isCodedError(second, 'TICK_RUNNING')).toBe(true);
    expect((second as Error).message).toContain(`tick ${running.tick} (PID ${process.pid}`);
    // Once the agent is at work (its first tool call is in the log), hand it a message.
    await pollUntil(async () => {
      const text = await readFile(t!.instance.paths.tickLog(running.tick), 'utf8').catch(() => '');
      return text.includes('mcp__agent-kernel__wait');
    }, 'the agent to start working', { timeoutMs: 60_000 });
    expect(running.deliver('the build finished: 3 warnings')).toBe(true);
    const outcome = await running.done;
    expect(outcome.status).toBe('ok');
    expect(await readFile(path.join(t.dataDir, 'tmp', 'fake-claude-received.txt'), 'utf8')).toContain('the build finished: 3 warnings');
    expect(outcome.lastMessage).toContain('Received: A new message arrived during this tick');
    expect(running.deliver('too late')).toBe(false);
  });

  it('ends the tick with a clear error when our MCP server does not connect', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_BREAK_MCP: '1' } });
    const outcome = await tick(t);
    expect(outcome).toMatchObject({ status: 'failed', errorClass: 'mcp', paused: false });
    expect(outcome.error).toMatch(/MCP server "agent-kernel" did not connect \(status: failed\)\. Read its log \(.*server\.log\), or run "node .*agent-kernel\.js serve /);
    expect(await survivors(t.pidFile)).toEqual([]);
  });

  it('ends a tick that runs past runner.timeout, and one that is cancelled', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'hang' }, timeout: '4s', grace_period: '1s' });
    const timedOut = await tick(t);
    expect(timedOut).toMatchObject({ status: 'interrupted', errorClass: 'timeout' });
    expect(timedOut.error).toContain('runner.timeout');
    // The runner and the server it starts agree on the container: nobody recreates it (and kills the terminals) at the next tick.
    const engine = await connectEngine();
    const containerId = async () => (await engine.docker.getContainer(containerName(t!.name)).inspect()).Id;
    const firstId = await containerId();

    await t.writeHook('post-tick', '10-status', '#!/bin/sh\necho "$AGENT_TICK_STATUS" > "$DATA_DIR/post-tick.status"\n');
    // The cancelled tick must not reach runner.timeout first on a busy machine.
    const operator = JSON.parse(await readFile(t.instance.paths.operatorConfig, 'utf8')) as { runner: Record<string, unknown> };
    await writeFile(t.instance.paths.operatorConfig, JSON.stringify(withTestBases({ ...operator, runner: { ...operator.runner, timeout: '5m' } })));
    const controller = new AbortController();
    const running = await startTick(await t.reloaded(), { logger: t.logger, env: t.env, signal: controller.signal });
    await pollUntil(async () => (await readFile(t!.instance.paths.tickLog(running.tick), 'utf8').catch(() => '')).includes('mcp__agent-kernel__login'), 'login', { timeoutMs: 90_000 });
    controller.abort();
    const cancelled = await running.done;
    expect(cancelled).toMatchObject({ status: 'interrupted', errorClass: 'aborted' });
    // done resolves after the post-tick hooks ran.
    expect((await readFile(path.join(t.dataDir, 'post-tick.status'), 'utf8')).trim()).toBe('abnormal');
    expect(await containerId()).toBe(firstId);
    expect(await survivors(t.pidFile)).toEqual([]);
  });

  it('pushes the commits the agent made in its container to the operator\'s remote after the post-tick hooks', async () => {
    const remoteDir = await mkdtemp(path.join(os.tmpdir(), 'ak-remote-'));
    const remote = path.join(remoteDir, 'agent.git');
    t = await tickTestInstance({ push: { remote } });
    await writeFile(t.instance.paths.containerfile, GIT_CONTAINERFILE);
    await execFileAsync('git', ['init', '-q', '--bare', remote]);
    try {
      // The agent commits in its container (here in a post-tick hook); the host only pushes.
      await t.writeHook('post-tick', '10-commit', `#!/bin/sh\nset -e\n${AGENT_GIT_SETUP}\ncd "$DATA_DIR"\ngit init -q -b main\necho "tick $AGENT_TICK" >> notes.txt\ngit add notes.txt\ngit commit -qm "tick $AGENT_TICK"\n`);
      expect((await tick(t)).status).toBe('ok');
      const log = async () => (await execFileAsync('git', ['--git-dir', remote, 'log', '--format=%s', 'main'])).stdout.trim();
      expect(await log()).toBe('tick 1');
      expect((await tick(t)).status).toBe('ok');
      expect(await log()).toBe('tick 2\ntick 1');
    } finally {
      await rm(remoteDir, { recursive: true, force: true });
    }
  });

  it('cleans up after a runner that was killed mid-tick: its harness is stopped, its tick recorded as failed', async () => {
    t = await tickTestInstance({ env: { FAKE_CLAUDE_SCENARIO: 'hang' }, idle_timeout: '5m' });
    const runner = spawn(process.execPath, [KERNEL_RUNNER_BIN, 'tick', t.name], { env: t.env, stdio: 'ignore' });
    const logFile = t.instance.paths.tickLog(1);
    await pollUntil(async () => (await readFile(logFile, 'utf8').catch(() => '')).includes('mcp__agent-kernel__login'), 'the first tick to be at work', { timeoutMs: 120_000 });
    const orphans = JSON.parse(await readFile(t.pidFile, 'utf8')) as { claude: number; servers: number[] };
    runner.kill('SIGKILL');
    await new Promise((resolve) => runner.once('exit', resolve));
    expect(isAlive(orphans.claude)).toBe(true);

    await writeFile(t.instance.paths.operatorConfig, JSON.stringify(withTestBases({ container: { network: 'none' }, runner: { command: FAKE_CLAUDE } })));
    const outcome = await tick(t);
    expect(outcome).toMatchObject({ tick: 2, status: 'ok' });
    await expect.poll(() => [orphans.claude, ...orphans.servers].filter(isAlive), { timeout: 5000 }).toEqual([]);
    const state = await loadState(t.instance.paths.state);
    expect(state.history.map((r) => [r.tick, r.status])).toEqual([
      [1, 'failed'],
      [2, 'ok'],
    ]);
    expect(state.history[0]?.error).toMatch(/the runner \(PID \d+\) stopped during this tick/);
  });
});
