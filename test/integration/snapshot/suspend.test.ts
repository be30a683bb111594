import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { isCodedError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log/logger.js';
import { sendOperatorMessage } from '../../../src/mail/operator-send.js';
import { type AgentStatus, queryStatusSocket, statusSocketPath } from '../../../src/runner/watch/service/status-api.js';
import { containerName } from '../../../src/sandbox/container/container.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import { DockerSandbox } from '../../../src/sandbox/docker-sandbox.js';
import { connectEngine, inspectNamed } from '../../../src/sandbox/engine/engine.js';
import { loadState } from '../../../src/state/runner-state.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { pollUntil } from '../../helpers/poll.js';
import { KERNEL_RUNNER_BIN, type TickTestInstance, tickTestInstance } from '../runner/tick-helpers.js';

const run = promisify(execFile);
const LONG = 180_000;

describeWithEngine('kernel-runner suspend: the container saved and removed, brought back by resume or the next tick', () => {
  let t: TickTestInstance | undefined;
  let watch: ChildProcess | undefined;

  const runner = (...args: string[]) =>
    run(process.execPath, [KERNEL_RUNNER_BIN, ...args], { env: t!.env }).then(
      ({ stdout, stderr }) => ({ stdout, stderr, code: 0 }),
      (error: { stdout: string; stderr: string; code: number }) => ({ stdout: error.stdout, stderr: error.stderr, code: error.code }),
    );

  afterEach(async () => {
    if (watch && watch.exitCode === null) {
      const exited = new Promise((r) => watch!.once('exit', r));
      watch.kill('SIGTERM');
      await exited;
    }
    watch = undefined;
    await t?.dispose();
    t = undefined;
  });

  const container = async (name: string) => inspectNamed(await connectEngine(), containerName(name));
  const inside = async (name: string, script: string) => {
    const box = new DockerSandbox({ engine: await connectEngine(), containerName: containerName(name), cwd: '/' });
    const result = await box.run(['sh', '-c', script], { user: '0' });
    return { code: result.exitCode, out: result.stdout.trim() };
  };

  it('suspend removes the container, nothing starts a fresh one, and resume brings back what the agent installed', { timeout: 400_000 }, async () => {
    t = await tickTestInstance({});
    await openSandbox(t.instance, { logger: silentLogger() });
    expect((await inside(t.name, 'echo installed > /usr/local/bin/agent-tool && echo kept > /root/state')).code).toBe(0);

    const suspended = await runner('suspend', t.name);
    expect(suspended.code, suspended.stderr).toBe(0);
    expect(suspended.stdout).toMatch(new RegExp(`^Suspended ${t.name} in [0-9.]+ s: its container is saved in snapshot 1 `));
    expect(await container(t.name)).toBeUndefined();
    expect((await runner('status', t.name)).stdout).toMatch(/suspended/);
    expect((await runner('ls')).stdout).toMatch(new RegExp(`${t.name} .* suspended since .* \\(snapshot 1\\)`));
    expect((await runner('snapshots', t.name)).stdout).toMatch(/^1 .* suspend .* suspended/m);

    // Nothing else makes a container from the image meanwhile (that would lose what the agent installed).
    const refused = await openSandbox(t.instance, { logger: silentLogger() }).catch((e: unknown) => e);
    expect(isCodedError(refused, 'INSTANCE_SUSPENDED'), String(refused)).toBe(true);
    expect((refused as Error).message).toContain(`kernel-runner resume ${t.name} brings it back`);
    expect(await container(t.name)).toBeUndefined();
    expect((await runner('suspend', t.name)).stderr).toContain('is suspended already');

    const resumed = await runner('resume', t.name);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^Resumed .* from snapshot 1 .* checked against their digests/);
    expect(await inside(t.name, 'cat /usr/local/bin/agent-tool /root/state')).toEqual({ code: 0, out: 'installed\nkept' });
    expect((await runner('status', t.name)).stdout).not.toMatch(/suspended/);
    await openSandbox(t.instance, { logger: silentLogger() });
    expect((await runner('resume', t.name)).stdout).toContain('neither paused nor suspended');
  });

  it('under watch, a message to a suspended instance resumes it and its tick runs in the restored container', { timeout: 600_000 }, async () => {
    t = await tickTestInstance({});
    await writeFile(t.instance.paths.startup, JSON.stringify({ terminals: [{ tty: 0 }] }));
    Object.assign(t.env, { FAKE_CLAUDE_COMMAND: `cat /root/before-suspend > ${t.dataDir}/seen.txt` });
    await openSandbox(t.instance, { logger: silentLogger() });
    watch = spawn(process.execPath, [KERNEL_RUNNER_BIN, 'watch', t.name], { env: t.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    watch.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const status = async () => (await queryStatusSocket(statusSocketPath(t!.name, t!.env), `/v1/agents/${t!.name}`).catch(() => undefined))?.body as AgentStatus | undefined;
    await pollUntil(async () => (await status())?.kernel?.state === 'ready', 'the kernel ready under watch', { timeoutMs: 90_000 });
    expect((await inside(t.name, 'echo from-before > /root/before-suspend')).code).toBe(0);

    const suspended = await runner('suspend', t.name);
    expect(suspended.code, suspended.stderr).toBe(0);
    expect(await container(t.name)).toBeUndefined();
    // Watch's kernel comes back but makes no container while suspended.
    await pollUntil(async () => (await runner('status', t!.name)).stdout.includes('suspended'), 'status to say suspended', { timeoutMs: 60_000 });
    expect(await container(t.name)).toBeUndefined();

    await sendOperatorMessage(t.instance, { text: '[fake:start-command] after the suspend' });
    await pollUntil(async () => (await loadState(t!.instance.paths.state)).last?.tick === 1, 'the tick to end', { timeoutMs: LONG });
    await pollUntil(async () => (await readFile(path.join(t!.dataDir, 'seen.txt'), 'utf8').catch(() => '')) === 'from-before\n', 'the tick to read the file saved before the suspend', { timeoutMs: 60_000 });
    expect((await runner('status', t.name)).stdout).not.toMatch(/suspended/);
    expect(stderr).not.toMatch(/INSTANCE_SUSPENDED.*crash/i);
  });
});
