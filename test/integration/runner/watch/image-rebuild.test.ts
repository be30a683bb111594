import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { kernelHealth } from '../../../../src/kernel/client/link.js';
import { kernelSocketPath } from '../../../../src/kernel/socket-path.js';
import { createLogger } from '../../../../src/log/logger.js';
import { type RunningWatch, runWatch } from '../../../../src/runner/watch/run-watch.js';
import { queryStatusSocket, statusSocketPath } from '../../../../src/runner/watch/service/status-api.js';
import { loadState } from '../../../../src/state/runner-state.js';
import { describeWithEngine } from '../../../helpers/engine.js';
import { pollUntil } from '../../../helpers/poll.js';
import { TEST_IMAGE } from '../../../helpers/test-instance.js';
import { KERNEL_RUNNER_BIN, type TickTestInstance, readJsonLines, survivors, tickTestInstance } from '../tick-helpers.js';

const run = promisify(execFile);

/**
 * The agent changes its Containerfile between ticks; the operator sends a message; watch's
 * tick asks the kernel to build the new image. A slow build (a 30 s RUN step, far past any
 * fixed request timeout) goes on, and the tick runs in the new image; a build that fails gives
 * its step and output in the tick's result and at the agent's login, and the tick goes on in
 * the container as it was.
 */
describeWithEngine('a tick after the agent changed its Containerfile', () => {
  let t: TickTestInstance | undefined;
  let watching: RunningWatch | undefined;

  afterEach(async () => {
    await watching?.stop();
    watching = undefined;
    if (t && existsSync(t.pidFile)) for (const pid of await survivors(t.pidFile)) process.kill(pid, 'SIGKILL');
    await t?.dispose();
    t = undefined;
  });

  /** Watch (with its kernel) running, its terminals up; the Containerfile then changed to `containerfile`, and a message sent. */
  async function changeAndSend(containerfile: string): Promise<TickTestInstance> {
    const instance = await tickTestInstance({ timeout: '5m' });
    t = instance;
    instance.env.FAKE_CLAUDE_RESULTS = path.join(instance.home, 'results.jsonl');
    // Where the tick runs: its pre-tick hook runs in the container and says which image that is.
    await instance.writeHook('pre-tick', '10-image', `#!/bin/sh\ncat /etc/ak-image 2>/dev/null > ${instance.dataDir}/image-seen || echo old > ${instance.dataDir}/image-seen\n`);
    const logger = createLogger({ process: `watch-${instance.name}`, logDir: instance.instance.paths.logs, stderr: false });
    watching = await runWatch(instance.name, { env: instance.env, pollMs: 250, logger });
    const socket = kernelSocketPath(instance.instance.paths.stateRoot, instance.env);
    await pollUntil(async () => (await kernelHealth(socket).catch(() => undefined))?.terminals.state === 'ready', 'the kernel\'s terminals up in the first image', { timeoutMs: 120_000 });
    await writeFile(instance.instance.paths.containerfile, containerfile);
    await run(process.execPath, [KERNEL_RUNNER_BIN, 'send', instance.name, 'Your Containerfile changed.'], { env: instance.env });
    await pollUntil(async () => (await loadState(instance.instance.paths.state)).last?.tick === 1, 'tick 1 to end', { timeoutMs: 280_000, intervalMs: 500 });
    return instance;
  }

  it('runs in the new image when a build step takes 30 s', { timeout: 420_000 }, async () => {
    // A step of its own (never in the engine's build cache): the build really takes 30 s.
    const token = randomUUID();
    const i = await changeAndSend(`FROM ${TEST_IMAGE}\nRUN sleep 30 && echo rebuilt-${token} > /etc/ak-image\n`);
    const last = (await loadState(i.instance.paths.state)).last!;
    expect(last).toMatchObject({ tick: 1, status: 'ok' });
    expect(last.build_failed).toBeUndefined();
    expect((await readFile(path.join(i.dataDir, 'image-seen'), 'utf8')).trim()).toBe(`rebuilt-${token}`);
    // In one go: no start that failed (the kernel "did not answer" at 5 s) and was retried once the build was done.
    // The tick writes state.json before watch has settled its mail and recorded the result: ask until it has.
    const answer = await pollUntil(
      async () => {
        const reply = await queryStatusSocket(statusSocketPath(i.name, i.env), `/v1/agents/${i.name.toUpperCase()}`);
        return (reply.body as { lastResult?: unknown }).lastResult ? reply : undefined;
      },
      'watch to record how tick 1 ended',
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(answer.body).toMatchObject({ restarts: 0, lastResult: { tick: 1, status: 'ok' } });
    expect(watching!.kernel!.status().restarts).toBe(0);
  });

  it('gives the failing step and its output in the tick\'s result and at login, and goes on in the container as it was', { timeout: 420_000 }, async () => {
    const i = await changeAndSend(`FROM ${TEST_IMAGE}\nRUN echo "E: Unable to locate package w3m-offline-test" && false\n`);
    const last = (await loadState(i.instance.paths.state)).last!;
    expect(last).toMatchObject({ tick: 1, status: 'ok' });
    expect(last.build_failed?.step).toMatch(/^Step \d+\/\d+ : RUN echo "E: Unable to locate package w3m-offline-test" && false/);
    expect(last.build_failed?.output.join('\n')).toContain('E: Unable to locate package w3m-offline-test');
    expect(last.build_failed?.error).toMatch(/non-zero code: 1/);
    expect((await readFile(path.join(i.dataDir, 'image-seen'), 'utf8')).trim()).toBe('old');
    const login = (await readJsonLines(i.env.FAKE_CLAUDE_RESULTS!)).find((line) => line.tool === 'login');
    const text = JSON.stringify(login?.result);
    expect(text).toContain('did not build at this tick\'s start, at Step');
    expect(text).toContain('E: Unable to locate package w3m-offline-test');
  });
});
