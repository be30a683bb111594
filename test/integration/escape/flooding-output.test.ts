import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { runHooks } from '../../../src/runner/hooks/hooks.js';
import { LocalAgentFiles } from '../../../src/util/agent-files.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { ensureImage } from '../../../src/sandbox/container/instance-image.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import { MAX_OUTPUT_BYTES } from '../../../src/sandbox/run-collect.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { readProcessTable } from '../../../src/tty/probe/process-table.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { TEST_CONTAINERFILE, type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

/**
 * What the host runs in the container is the agent's to replace (its hooks, and `cat` or `sh`
 * themselves: it is root there), and the host collects what those print. An endless stream
 * must not fill the host's memory: it is stopped at the cap instead of its time limit.
 */
describeWithEngine('escape: endless output from what the host runs in the container', () => {
  let test: TestInstance;
  let sandbox: Sandbox;

  async function agent(script: string): Promise<void> {
    const result = await sandbox.run(['sh', '-c', script]);
    if (result.exitCode !== 0) throw new Error(`in the container: ${script}: ${result.stderr}`);
  }

  /** Run `work` while sampling this process's memory; returns its result and the peak growth in MB. */
  async function withPeakMemory<T>(work: () => Promise<T>): Promise<{ value: T; grewMb: number }> {
    const before = process.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    try {
      const value = await work();
      peak = Math.max(peak, process.memoryUsage().rss);
      return { value, grewMb: (peak - before) / 1024 / 1024 };
    } finally {
      clearInterval(timer);
    }
  }

  beforeAll(async () => {
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
  });
  afterAll(async () => {
    await test?.cleanup();
  });

  it.each([
    ['stdout', 'exec cat /dev/zero'],
    ['stderr', 'exec cat /dev/zero >&2'],
  ])('a hook flooding %s is stopped at the cap, before its time limit', async (_stream, body) => {
    const dir = path.join(test.dataDir, 'system', 'hooks', 'pre-tick');
    await agent(`mkdir -p '${dir}' && rm -f '${dir}'/* && printf '#!/bin/sh\\n${body}\\n' > '${dir}/flood' && chmod +x '${dir}/flood'`);
    const timeoutMs = 8000;
    const { value: results, grewMb } = await withPeakMemory(() =>
      runHooks('pre-tick', 'system/hooks/pre-tick', { sandbox, files: new LocalAgentFiles(test.dataDir), dataDir: test.dataDir, env: {}, cwd: test.dataDir, timeoutMs, logger: silentLogger() }),
    );
    const [result] = results;
    expect(result).toMatchObject({ hook: 'flood', timedOut: false, outputCapped: true });
    expect(result!.stdout.length + result!.stderr.length).toBeLessThanOrEqual(MAX_OUTPUT_BYTES);
    expect(grewMb).toBeLessThan(128);
    await agent(`rm -rf '${path.join(test.dataDir, 'system', 'hooks')}'`);
  }, 120_000);

  it('a cat the agent replaced cannot flood the process-table probe', async () => {
    await agent(`printf '#!/bin/sh\\nexec /usr/bin/cat /dev/zero\\n' > /usr/local/bin/cat && chmod +x /usr/local/bin/cat`);
    try {
      const { value: table, grewMb } = await withPeakMemory(() => readProcessTable(sandbox));
      // The probe gives up (no table this time) instead of holding gigabytes.
      expect(table === undefined || table.length < 100_000).toBe(true);
      expect(grewMb).toBeLessThan(128);
    } finally {
      await agent('rm -f /usr/local/bin/cat');
    }
    expect((await readProcessTable(sandbox))?.length).toBeGreaterThan(0);
  }, 120_000);

  it('a Containerfile whose RUN prints hundreds of MB builds without the host keeping that output', async () => {
    // The agent edits its own Containerfile; the host builds it and reads the engine's progress stream.
    const containerfile = path.join(test.dataDir, 'system', 'container', 'Containerfile');
    const base = (await readFile(TEST_CONTAINERFILE, 'utf8')).split('\n').find((l) => l.startsWith('FROM '))!;
    await agent(`printf '%s\\n' '${base}' 'RUN head -c 400000000 /dev/zero | tr "\\\\0" "y" | fold -w 4000' > '${containerfile}'`);
    const engine = await connectEngine();
    const instance = await test.reload();
    const lines: number[] = [];
    const { grewMb } = await withPeakMemory(() =>
      ensureImage(engine, instance, { logger: silentLogger(), force: true, onProgress: (line) => lines.push(line.length) }),
    );
    // The whole output went by (about 100,000 lines of 4,000 characters), and only a bounded part was kept.
    expect(lines.length).toBeGreaterThan(90_000);
    expect(grewMb).toBeLessThan(200);
  }, 600_000);
});
