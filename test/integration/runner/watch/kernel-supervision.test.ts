import { afterEach, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createLogger } from '../../../../src/log/logger.js';
import { type RunningWatch, runWatch } from '../../../../src/runner/watch/run-watch.js';
import { expectNothingLost, startPrinter } from './kernel-clients.js';
import { describeWithEngine } from '../../../helpers/engine.js';
import { BIN } from '../../server/helpers.js';
import { type TickTestInstance, isAlive, tickTestInstance } from '../tick-helpers.js';
import { pollUntil } from '../../../helpers/poll.js';

/**
 * watch supervises the kernel (seed 003): a dead kernel and a hung one are replaced within
 * seconds, a client's `serve` bridge reconnects by itself and nothing printed meanwhile is lost;
 * stopping watch stops the kernel and the terminals stay in the container.
 */
describeWithEngine("watch's supervision of the kernel", () => {
  let t: TickTestInstance | undefined;
  let watching: RunningWatch | undefined;
  let client: Client | undefined;

  afterEach(async () => {
    await client?.close().catch(() => undefined);
    client = undefined;
    await watching?.stop();
    watching = undefined;
    await t?.dispose();
    t = undefined;
  });

  it('restarts a killed and a hung kernel within seconds; the bridge reconnects and no line is lost; stopping watch leaves the terminals running', { timeout: 300_000 }, async () => {
    t = await tickTestInstance({});
    const logger = createLogger({ process: `watch-${t.name}`, logDir: t.instance.paths.logs, stderr: false });
    watching = await runWatch(t.name, { env: t.env, pollMs: 250, logger });
    const kernel = watching.kernel!;
    await pollUntil(() => kernel.status().state === 'ready' && kernel.status().terminalsState === 'ready', 'the kernel ready', { timeoutMs: 60_000 });

    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', t.dataDir], env: t.env as Record<string, string>, stderr: 'pipe' });
    client = new Client({ name: 'supervision-test', version: '1.0.0' });
    await client.connect(transport);
    const call = async (name: string, args: Record<string, unknown> = {}) => (await client!.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
    const printer = await startPrinter(call);
    const { tty } = printer;

    for (const how of ['SIGKILL', 'SIGSTOP'] as const) {
      const pid = kernel.status().pid!;
      const restarts = kernel.status().restarts;
      const began = Date.now();
      process.kill(pid, how);
      await pollUntil(() => kernel.status().restarts === restarts + 1 && kernel.status().state === 'ready' && kernel.status().pid !== pid, `a new kernel after ${how}`, { timeoutMs: 60_000 });
      // Dead: at once; hung: after 3 missed heartbeats of 2 s.
      expect(Date.now() - began).toBeLessThan(how === 'SIGKILL' ? 10_000 : 20_000);
      await pollUntil(() => !isAlive(pid), `the ${how === 'SIGSTOP' ? 'hung' : 'killed'} kernel gone`, { timeoutMs: 10_000 });
      // The same client, through the same bridge: log in again and carry on.
      await printer.loginAgain();
      await printer.look();
    }
    // Every line, in order: none lost, none repeated without the "possibly repeated" label.
    expectNothingLost(await printer.finish());

    // Stopping watch stops the kernel gracefully; the terminals stay in the container for the next one.
    const lastPid = kernel.status().pid!;
    await client.close();
    client = undefined;
    await watching.stop();
    watching = undefined;
    expect(isAlive(lastPid)).toBe(false);
    const again = new Client({ name: 'after-watch', version: '1.0.0' });
    await again.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', t.dataDir], env: t.env as Record<string, string>, stderr: 'pipe' }));
    try {
      const login = (await again.callTool({ name: 'login', arguments: {} })) as CallToolResult;
      expect(login.structuredContent).toMatchObject({ adopted: expect.arrayContaining([tty]) });
    } finally {
      await again.close();
    }
  });
});
