import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, expect, it } from 'vitest';
import { kernelHealth } from '../../../../src/kernel/client/link.js';
import { kernelSocketPath } from '../../../../src/kernel/socket-path.js';
import { createLogger } from '../../../../src/log/logger.js';
import { type RunningWatch, runWatch } from '../../../../src/runner/watch/run-watch.js';
import { describeWithEngine } from '../../../helpers/engine.js';
import { BIN } from '../../server/helpers.js';
import { KERNEL_RUNNER_BIN, type TickTestInstance, isAlive, tickTestInstance } from '../tick-helpers.js';
import { pollUntil } from '../../../helpers/poll.js';
import { type KernelClient, expectNothingLost, startPrinter, stdioClient } from './kernel-clients.js';

/**
 * A kernel that this watch did not start but adopted: the kernel of a watch that was killed
 * (it runs on in its own process group, an orphan), found serving when the next watch starts.
 * When it hangs, watch kills it and starts its own within seconds; the client's bridge
 * reconnects and nothing printed meanwhile is lost.
 */
describeWithEngine('an adopted kernel', () => {
  let t: TickTestInstance | undefined;
  let first: ChildProcess | undefined;
  let watching: RunningWatch | undefined;
  let client: KernelClient | undefined;

  afterEach(async () => {
    await client?.close();
    client = undefined;
    first?.kill('SIGKILL');
    first = undefined;
    await watching?.stop();
    watching = undefined;
    await t?.dispose();
    t = undefined;
  });

  it('that hangs is killed and replaced within seconds; the bridge reconnects and no line is lost', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({});
    const socket = kernelSocketPath(t.instance.paths.stateRoot, t.env);
    const health = () => kernelHealth(socket).catch(() => undefined);

    // A first watch, a real process, starts the kernel; then it is killed outright.
    first = spawn(process.execPath, [KERNEL_RUNNER_BIN, 'watch', t.name], { env: t.env, stdio: 'ignore' });
    await pollUntil(async () => (await health())?.terminals.state === 'ready', 'the first watch\'s kernel ready', { timeoutMs: 120_000 });
    const orphan = (await health())!.pid;
    first.kill('SIGKILL');
    await pollUntil(() => first!.exitCode !== null || first!.signalCode !== null, 'the first watch gone', { timeoutMs: 10_000 });
    first = undefined;
    expect(isAlive(orphan)).toBe(true);

    // The next watch adopts it rather than starting a second one.
    const logger = createLogger({ process: `watch-${t.name}`, logDir: t.instance.paths.logs, stderr: false });
    watching = await runWatch(t.name, { env: t.env, pollMs: 250, logger });
    const kernel = watching.kernel!;
    await pollUntil(() => kernel.status().state === 'ready', 'the kernel adopted', { timeoutMs: 30_000 });
    expect(kernel.status()).toMatchObject({ pid: orphan, restarts: 0 });

    client = await stdioClient(BIN, t.dataDir, t.env);
    const printer = await startPrinter(client.call);

    // It hangs: missed heartbeats, killed (it is not watch's child), another started.
    const began = Date.now();
    process.kill(orphan, 'SIGSTOP');
    await pollUntil(() => kernel.status().restarts === 1 && kernel.status().state === 'ready' && kernel.status().pid !== orphan, 'a kernel of its own after the adopted one hung', { timeoutMs: 60_000 });
    expect(Date.now() - began).toBeLessThan(30_000);
    await pollUntil(() => !isAlive(orphan), 'the hung kernel gone', { timeoutMs: 10_000 });
    expect(kernel.status().lastExit).toMatch(/stopped answering its heartbeat/);
    expect((await health())?.pid).toBe(kernel.status().pid);

    await printer.loginAgain();
    await printer.look();
    expectNothingLost(await printer.finish());
  });
});
