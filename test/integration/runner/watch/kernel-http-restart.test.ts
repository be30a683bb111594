import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../../../src/log/logger.js';
import { type RunningWatch, runWatch } from '../../../../src/runner/watch/run-watch.js';
import { describeWithEngine } from '../../../helpers/engine.js';
import { startHttpServe, textOf } from '../../server/helpers.js';
import { type TickTestInstance, isAlive, tickTestInstance } from '../tick-helpers.js';
import { pollUntil } from '../../../helpers/poll.js';
import { type KernelClient, expectNothingLost, httpClient, startPrinter } from './kernel-clients.js';

/**
 * `serve --http` relays each HTTP session to the instance's kernel. When watch restarts the
 * kernel (it died, it hung), an HTTP client keeps its session, as a stdio client keeps its
 * bridge: the call in flight is told that the kernel restarted and to log in again, the next
 * calls reach the new kernel, and nothing printed meanwhile is lost.
 */
describeWithEngine('serve --http through the kernel, across its restarts', () => {
  let t: TickTestInstance | undefined;
  let watching: RunningWatch | undefined;
  let serve: Awaited<ReturnType<typeof startHttpServe>> | undefined;
  let client: KernelClient | undefined;

  afterEach(async () => {
    await client?.close();
    client = undefined;
    await serve?.stop();
    serve = undefined;
    await watching?.stop();
    watching = undefined;
    await t?.dispose();
    t = undefined;
  });

  it("keeps an HTTP client's session when watch restarts the kernel: the call in flight is told to log in again, the next calls reach the new kernel, no line is lost", { timeout: 300_000 }, async () => {
    t = await tickTestInstance({});
    const logger = createLogger({ process: `watch-${t.name}`, logDir: t.instance.paths.logs, stderr: false });
    watching = await runWatch(t.name, { env: t.env, pollMs: 250, logger });
    const kernel = watching.kernel!;
    await pollUntil(() => kernel.status().state === 'ready' && kernel.status().terminalsState === 'ready', 'the kernel ready', { timeoutMs: 60_000 });

    const token = 'kernel-http-restart-test-token-0123456789';
    serve = await startHttpServe(t.dataDir, [], { ...(t.env as Record<string, string>), AGENT_KERNEL_TOKEN: token });
    expect(serve.stderr()).toContain('through its kernel');
    client = await httpClient(serve.url, token);
    const printer = await startPrinter(client.call);

    const restarted = async (how: 'SIGKILL' | 'SIGSTOP', pid: number, restarts: number) => {
      await pollUntil(() => kernel.status().restarts === restarts + 1 && kernel.status().state === 'ready' && kernel.status().pid !== pid, `a new kernel after ${how}`, { timeoutMs: 60_000 });
      await pollUntil(() => !isAlive(pid), 'the old kernel gone', { timeoutMs: 10_000 });
    };

    // 1. The kernel dies during a wait (it is surely running there once its first progress notice came).
    {
      const pid = kernel.status().pid!;
      const restarts = kernel.status().restarts;
      let progressed: () => void = () => {};
      const running = new Promise<void>((resolve) => (progressed = resolve));
      const inFlight = client.call('wait', { timeout: 60, until: { tty: printer.tty, regex: 'never-printed' } }, { onprogress: () => progressed() });
      await running;
      process.kill(pid, 'SIGKILL');
      const answer = await inFlight;
      expect(answer.isError).toBe(true);
      expect(textOf(answer)).toContain('kernel restarted while this call ran');
      expect(textOf(answer)).toContain('Call login() again');
      await restarted('SIGKILL', pid, restarts);
      // The same HTTP session: log in again and carry on.
      await printer.loginAgain();
      await printer.look();
    }

    // 2. The kernel hangs between two calls: watch kills it after missed heartbeats and starts another.
    {
      const pid = kernel.status().pid!;
      const restarts = kernel.status().restarts;
      process.kill(pid, 'SIGSTOP');
      await restarted('SIGSTOP', pid, restarts);
      await printer.loginAgain();
      await printer.look();
    }

    expectNothingLost(await printer.finish());
    // One serve --http process throughout.
    expect(serve.child.exitCode).toBeNull();
  });
});
