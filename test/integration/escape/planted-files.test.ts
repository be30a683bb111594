import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadEffectiveConfig } from '../../../src/config/operator-config.js';
import { loadStartup } from '../../../src/config/startup.js';
import { silentLogger } from '../../../src/log/logger.js';
import { readPaused } from '../../../src/runner/tick/paused.js';
import { loadTickPrompt } from '../../../src/runner/session/prompt.js';
import { beginTickRecord } from '../../../src/state/runner-state.js';
import { readPending, watchInbox } from '../../../src/mail/inbox.js';
import { loadSchedule } from '../../../src/runner/watch/schedule/schedule.js';
import { buildContext } from '../../../src/sandbox/engine/image.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { parseAgentConfig } from '../../../src/config/agent-config.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';
import { writeUntilWatched } from '../../helpers/watched-writes.js';

const SECRET = 'CANARY-host-secret-7f3a';

/**
 * The agent is root in the container and can write the whole data directory. It plants links,
 * FIFOs and huge files where the host reads; a host file it cannot see (the canary) must never
 * be read through them, and nothing the host writes may land outside the host-private state.
 */
describeWithEngine('escape: files the agent plants in the data directory', () => {
  let test: TestInstance;
  let sandbox: Sandbox;
  let canaryDir: string;
  let canary: string;

  /** Run a shell line inside the container, as root, like the agent would. */
  async function agent(script: string): Promise<void> {
    const result = await sandbox.run(['sh', '-c', script]);
    if (result.exitCode !== 0) throw new Error(`in the container: ${script}: ${result.stderr}`);
  }

  beforeAll(async () => {
    canaryDir = await mkdtemp(path.join(os.tmpdir(), 'ak-canary-'));
    canary = path.join(canaryDir, 'secret');
    await writeFile(canary, `${SECRET}\n`);
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
    // The agent cannot see the canary: links to it dangle inside, and only the host would follow them.
    expect((await sandbox.run(['test', '-e', canary])).exitCode).not.toBe(0);
  });
  afterAll(async () => {
    await test?.cleanup();
    await rm(canaryDir, { recursive: true, force: true });
  });

  const d = (rel: string) => path.join(test.dataDir, rel);
  const readers: Array<[string, () => Promise<unknown>]> = [
    ['system/agent_config.json', () => loadEffectiveConfig(test.name, test.dataDir)],
    ['system/startup.json', () => loadStartup(test.dataDir)],
    ['system/schedule.json', () => loadSchedule(test.instance.paths)],
    ['system/paused', () => readPaused(test.instance.paths)],
    ['prompt.md', () => loadTickPrompt(test.dataDir, parseAgentConfig({ runner: { prompt_file: 'prompt.md' } }).runner)],
  ];

  async function refusedWithoutSecret(read: () => Promise<unknown>): Promise<void> {
    const outcome = await read().then(
      (value) => ({ ok: true, text: JSON.stringify(value) }),
      (error: unknown) => ({ ok: false, text: String((error as Error).message) }),
    );
    expect(outcome.text).not.toContain(SECRET);
    expect(outcome.ok).toBe(false);
    // Refused for what it is, not merely because the canary is not valid JSON.
    expect(outcome.text).toMatch(/symbolic link|not a regular file|byte limit/);
  }

  it.each(readers)('refuses a link at %s to a host file, and never reads it', async (rel, read) => {
    await agent(`mkdir -p "$(dirname '${d(rel)}')" && rm -rf '${d(rel)}' && ln -s '${canary}' '${d(rel)}'`);
    await refusedWithoutSecret(read);
    // A link on the way (the folder itself) is refused too.
    if (rel.startsWith('system/')) {
      await agent(`rm -rf '${d('system2')}' && mv '${d('system')}' '${d('system2')}' && ln -s '${canaryDir}' '${d('system')}'`);
      await writeFile(path.join(canaryDir, path.basename(rel)), `"${SECRET}"`);
      try {
        await refusedWithoutSecret(read);
      } finally {
        await agent(`rm '${d('system')}' && mv '${d('system2')}' '${d('system')}'`);
        await rm(path.join(canaryDir, path.basename(rel)), { force: true });
      }
    }
    await agent(`rm -f '${d(rel)}'`);
  });

  it.each(readers)('refuses a FIFO at %s at once instead of hanging', async (rel, read) => {
    await agent(`rm -rf '${d(rel)}' && mkfifo '${d(rel)}'`);
    await refusedWithoutSecret(read);
    await agent(`rm -f '${d(rel)}'`);
  });

  it.each(readers)('refuses a huge file at %s without reading it', async (rel, read) => {
    await agent(`rm -rf '${d(rel)}' && truncate -s 4G '${d(rel)}'`);
    await refusedWithoutSecret(read);
    await agent(`rm -f '${d(rel)}'`);
  });

  it('delivers only regular inbox files: a link or FIFO there is never opened', async () => {
    await agent(`mkdir -p '${d('inbox')}' && ln -s '${canary}' '${d('inbox/evil.md')}' && mkfifo '${d('inbox/fifo.md')}' && echo hello > '${d('inbox/good.md')}'`);
    const invalid: string[] = [];
    const messages = await readPending(test.instance.paths, (file, reason) => invalid.push(`${file}: ${reason}`));
    expect(JSON.stringify(messages)).not.toContain(SECRET);
    expect(JSON.stringify(messages)).toContain('hello');
    expect(invalid.join('\n')).not.toContain(SECRET);
    // Only the regular file is a message: the link and the FIFO are never opened.
    expect(messages).toHaveLength(1);
  });

  it('sets no watch through an inbox the agent replaced with a link to a busy host folder', async () => {
    const busy = await mkdtemp(path.join(os.tmpdir(), 'ak-busy-'));
    try {
      await agent(`rm -rf '${d('inbox')}' && ln -s '${busy}' '${d('inbox')}'`);
      let wakes = 0;
      // A poll far beyond the test: only a watch could wake it.
      const watcher = watchInbox(test.instance.paths, () => (wakes += 1), 600_000);
      try {
        await writeUntilWatched(busy);
        expect(wakes).toBe(0);
      } finally {
        watcher.close();
      }
    } finally {
      await agent(`rm -f '${d('inbox')}' && mkdir -p '${d('inbox')}'`);
      await rm(busy, { recursive: true, force: true });
    }
  });

  it('refuses a link in the Containerfile build context', async () => {
    await agent(`ln -s '${canary}' '${d('system/container/stolen')}'`);
    await expect(buildContext(test.instance)).rejects.toThrow(/symbolic link/);
    await agent(`rm '${d('system/container/stolen')}'`);
  });

  it('cannot write the host-private folders it is shown, and links at their old paths change nothing the host writes', async () => {
    for (const { target } of test.instance.paths.showToContainer) {
      const result = await sandbox.run(['sh', '-c', `ln -s '${canary}' '${target}/planted' || touch '${target}/planted'`]);
      expect(result.exitCode, target).not.toBe(0);
    }
    // The next archive name the host would pick and prune (`tty_N-tick-NNN-part`, in logs/sessions): not the agent's to plant.
    await mkdir(test.instance.paths.sessionArchive, { recursive: true });
    const archives = path.join(test.instance.paths.shownLogs, 'sessions');
    const planted = await sandbox.run(['sh', '-c', `ln -s '${canary}' '${archives}/tty_0-tick-000-2' || mkfifo '${archives}/tty_0-tick-000-3'`]);
    expect(planted.exitCode).not.toBe(0);
    expect(planted.stderr).toMatch(/Read-only file system/);
    // state.json used to be in system/: a link there does not receive the runner's writes.
    await agent(`ln -sf '${canary}' '${d('system/state.json')}'`);
    await beginTickRecord(test.instance.paths.state, { started: new Date().toISOString() });
    expect(await readFile(canary, 'utf8')).toBe(`${SECRET}\n`);
    expect(test.instance.paths.state.startsWith(test.instance.paths.stateRoot)).toBe(true);
  });
});
