import { execFile } from 'node:child_process';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { startTick } from '../../../src/runner/tick/tick.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type RealHarness, REAL_HARNESSES, fakeModelRequests, makeDataRepo } from './harness-helpers.js';
import { KERNEL_RUNNER_BIN, type TickTestInstance, readJsonLines, tickTestInstance } from './tick-helpers.js';

// Each test starts a container and a real agent CLI; on a loaded 2-core machine that can take a while.
vi.setConfig({ testTimeout: 300_000 });

/**
 * opencode, Gemini CLI and Codex CLI, the pinned real binaries, run ticks as the runner runs
 * them: each in a network namespace of its own with only loopback, where the fake model
 * (test/fixtures/fake-model) stands in for the service. What each CLI offers the model, and
 * what it sends, is read from the requests the fake logs: the real CLI's own report.
 */
for (const cli of REAL_HARNESSES) describeWithEngine(`kernel-runner tick with the real ${cli.harness}`, () => realHarnessTests(cli));

function realHarnessTests(cli: RealHarness): void {
  let t: TickTestInstance | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it('connects our server, offers the model only our tools, and the agent logs in through it', async () => {
    t = await tickTestInstance(cli.runner());
    const log = path.join(t.home, 'fake-model.jsonl');
    const outcome = await (await startTick(await t.reloaded(), { logger: t.logger, env: { ...t.env, ...cli.env, FAKE_MODEL_LOG: log } })).done;

    expect(outcome).toMatchObject({ status: 'ok', attempts: 1 });
    // Our real server answered the login the model asked for, through the real CLI, and the CLI handed the result back.
    // (Codex shows the model the result's structuredContent, the others its text.)
    expect(outcome.lastMessage).toMatch(/^FAKE-MODEL-DONE /);
    expect(outcome.lastMessage).toContain(t.name);
    const lines = await readJsonLines(outcome.logFile);
    expect(lines.some((l) => l.type === 'kernel_runner' && l.event === 'mcp-connected')).toBe(true);

    const requests = await fakeModelRequests(log);
    const agentRequests = requests.filter((r) => r.tools.length > 0);
    expect(agentRequests.length).toBeGreaterThanOrEqual(2);
    for (const request of agentRequests) expect(request.tools.sort()).toEqual(cli.offered.sort());
    expect(agentRequests.some((r) => r.toolResult)).toBe(true);
  });

  it('pauses for missing credentials, naming the file that fixes it', async () => {
    t = await tickTestInstance(cli.runner({ withoutCredentials: true }));
    const env = { ...t.env, ...cli.env };
    for (const name of cli.credentialVariables) delete env[name];
    const outcome = await (await startTick(await t.reloaded(), { logger: t.logger, env })).done;

    expect(outcome).toMatchObject({ status: 'failed', errorClass: 'fatal', paused: true });
    expect(outcome.error).toContain(cli.fix(t));
    expect(await readFile(t.instance.paths.paused, 'utf8')).toContain(cli.fix(t));
  });

  it('run from inside the data folder, loads none of the project files, plugins, settings or context the agent planted there', async () => {
    t = await tickTestInstance(cli.runner());
    const canary = path.join(t.instance.paths.stateRoot, `${cli.harness}-planted-code-ran`);
    const marker = `PLANTED-CONTEXT-${cli.harness}`;
    await makeDataRepo(t.dataDir);
    const sandbox = await openSandbox(t.instance, { logger: silentLogger() });
    // As root inside its container, the agent writes where the CLI would look if it ran in the data repo.
    const planted = await sandbox.run(['sh', '-c', cli.plant({ dataDir: t.dataDir, canary, marker })]);
    expect(planted.exitCode).toBe(0);

    const log = path.join(t.home, 'fake-model.jsonl');
    const env = { ...t.env, ...cli.env, FAKE_MODEL_LOG: log, FAKE_MODEL_WATCH: marker, PWD: t.dataDir };
    const summary = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [KERNEL_RUNNER_BIN, 'tick', t!.name], { cwd: t!.dataDir, env, timeout: 240_000 }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
      );
    });
    expect(summary).toMatch(/\bok\b/);

    await expect(access(canary)).rejects.toThrow();
    const requests = await fakeModelRequests(log);
    expect(requests.filter((r) => r.tools.length > 0).length).toBeGreaterThan(0);
    for (const request of requests) expect(request.watched).toEqual([]);
    for (const request of requests.filter((r) => r.tools.length > 0)) expect(request.tools.sort()).toEqual(cli.offered.sort());
  });
}
