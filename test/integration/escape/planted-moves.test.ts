import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { initInstance } from '../../../src/runner/instances/init.js';
import { markDelivered, readPending } from '../../../src/mail/inbox.js';
import { buildContext, contextHash } from '../../../src/sandbox/engine/image.js';
import { packContext } from '../../../src/sandbox/engine/build-context.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

const SECRET = 'CANARY-host-secret-2b9c';

/** Run `round` until the racer has run `minRounds` (and at least `minMs` passed), within `maxMs`. */
async function raceAgainst(race: { rounds(): Promise<number> }, round: () => Promise<void>, minRounds = 200, minMs = 3000, maxMs = 60_000): Promise<number> {
  const started = Date.now();
  let hostRounds = 0;
  // The container rewrites its count in place (`echo $i > file`): a read can find it empty, so keep the highest.
  let raced = 0;
  while (Date.now() - started < maxMs) {
    await round();
    hostRounds++;
    if (hostRounds % 10 === 0 && Date.now() - started >= minMs && (raced = Math.max(raced, await race.rounds())) >= minRounds) break;
  }
  return Math.max(raced, await race.rounds());
}

/**
 * The agent, root in its container, plants links where the host creates folders, writes and
 * moves files (the inbox's done/ and invalid/, messages, system/hooks before init, the build
 * context), and swaps them while the host works. A host folder it cannot see (the canary)
 * must come out exactly as it was, and honest messages must still arrive.
 */
describeWithEngine('escape: links where the host moves, creates and packs files', () => {
  let test: TestInstance;
  let sandbox: Sandbox;
  let canaryDir: string;
  let canary: string;

  async function agent(script: string): Promise<void> {
    const result = await sandbox.run(['sh', '-c', script], { timeoutMs: 60_000 });
    if (result.exitCode !== 0) throw new Error(`in the container: ${script}: ${result.stderr}`);
  }

  /** A loop in the container until the host drops `stop`; `rounds()` is how many it has run. */
  function racer(name: string, body: string): { rounds(): Promise<number>; stop(): Promise<void> } {
    const stopFile = path.join(test.dataDir, `.stop-${name}`);
    const countFile = path.join(test.dataDir, `.count-${name}`);
    const done = sandbox.run(['sh', '-c', `i=0; while [ ! -e '${stopFile}' ]; do ${body}; i=$((i+1)); echo $i > '${countFile}'; done`], { timeoutMs: 600_000 });
    return {
      rounds: async () => Number((await readFile(countFile, 'utf8').catch(() => '0')).trim()) || 0,
      async stop() {
        await writeFile(stopFile, '');
        await done;
        await rm(stopFile, { force: true });
        await rm(countFile, { force: true });
      },
    };
  }

  async function canaryUntouched(): Promise<void> {
    expect((await readdir(canaryDir)).sort()).toEqual(['secret']);
    expect(await readFile(canary, 'utf8')).toBe(`${SECRET}\n`);
  }

  beforeAll(async () => {
    canaryDir = await mkdtemp(path.join(os.tmpdir(), 'ak-canary-moves-'));
    canary = path.join(canaryDir, 'secret');
    await writeFile(canary, `${SECRET}\n`);
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
    expect((await sandbox.run(['test', '-e', canaryDir])).exitCode).not.toBe(0);
  });
  afterAll(async () => {
    await test?.cleanup();
    await rm(canaryDir, { recursive: true, force: true });
  });

  const d = (rel: string) => path.join(test.dataDir, rel);

  it('never moves a message into a host folder linked as inbox/done or inbox/invalid, and delivers once they are folders again', async () => {
    await agent(`mkdir -p '${d('inbox')}' && ln -s '${canaryDir}' '${d('inbox/done')}' && ln -s '${canaryDir}' '${d('inbox/invalid')}'`);
    await agent(`echo hello > '${d('inbox/m1.md')}' && echo '{"nope": 1}' > '${d('inbox/bad.json')}'`);
    const invalid: string[] = [];
    const messages = await readPending(test.instance.paths, (file, reason) => invalid.push(`${file}: ${reason}`));
    expect(messages.map((m) => m.text)).toEqual(['hello']);
    expect(invalid.join('\n')).toMatch(/bad\.json.*left in the inbox.*symbolic link/);
    await expect(markDelivered(test.instance.paths, messages[0]!)).rejects.toThrow(/inbox\/done.*symbolic link/);
    await canaryUntouched();

    await agent(`rm '${d('inbox/done')}' '${d('inbox/invalid')}' '${d('inbox/bad.json')}'`);
    const again = await readPending(test.instance.paths, () => {});
    await markDelivered(test.instance.paths, again[0]!);
    await agent(`test -f '${d('inbox/done/m1.md')}' && ! test -e '${d('inbox/m1.md')}'`);
  });

  it('never reads, moves or follows a message swapped for a link to a host file while done/ flips to a host folder (many rounds)', async () => {
    await agent(`rm -rf '${d('inbox')}' && mkdir -p '${d('inbox/done')}'`);
    // Each round: honest files while done/ and invalid/ are folders, then both flip to the host folder and the files to links.
    const race = racer(
      'inbox',
      `cd '${d('inbox')}' && rm -rf done invalid && mkdir -p done invalid && echo "race text" > .r.tmp && mv -f .r.tmp r.md && ` +
        `echo '{"bad":1}' > bad.json && rm -rf done invalid && ln -s '${canaryDir}' done && ln -s '${canaryDir}' invalid && ` +
        `ln -sfn '${canary}' r.md && ln -sfn '${canary}' bad.json; true`,
    );
    const texts: string[] = [];
    let rounds = 0;
    try {
      rounds = await raceAgainst(race, async () => {
        const messages = await readPending(test.instance.paths, (file, reason) => texts.push(reason)).catch((error: Error) => {
          texts.push(error.message);
          return [];
        });
        for (const message of messages) {
          texts.push(message.text);
          await markDelivered(test.instance.paths, message).catch((error: Error) => texts.push(error.message));
        }
      });
    } finally {
      await race.stop();
    }
    // Which interleavings a busy machine produces varies; the invariant is what matters (main's inbox.ts fails it).
    expect(rounds).toBeGreaterThanOrEqual(200);
    expect(texts.join('\n')).not.toContain(SECRET);
    await canaryUntouched();
    // Honest notes still arrive after the attack.
    await agent(`rm -rf '${d('inbox')}' && mkdir '${d('inbox')}' && echo 'after the race' > '${d('inbox/after.md')}'`);
    const after = await readPending(test.instance.paths, () => {});
    expect(after.map((m) => m.text)).toEqual(['after the race']);
    await markDelivered(test.instance.paths, after[0]!);
    await agent(`grep -q 'after the race' '${d('inbox/done/after.md')}'`);
  });

  it('init on a repo whose system/hooks links to a host folder writes nothing there, and says what it left out', async () => {
    const hostDir = await mkdtemp(path.join(os.tmpdir(), 'ak-canary-hooks-'));
    const configHome = await mkdtemp(path.join(os.tmpdir(), 'ak-config-'));
    try {
      await agent(`rm -rf '${d('system/hooks')}' && ln -s '${hostDir}' '${d('system/hooks')}' && ln -sfn '${canary}' '${d('.gitignore')}'`);
      const result = await initInstance(test.name, test.dataDir, { ...process.env, AGENT_KERNEL_CONFIG_DIR: configHome });
      expect(await readdir(hostDir)).toEqual([]);
      await canaryUntouched();
      expect(result.refused.join('\n')).toMatch(/system\/hooks.*symbolic link/);
      expect(result.created).toContain(d('system/startup.json'));
      await agent(`test -f '${d('system/startup.json')}' && test -L '${d('.gitignore')}'`);
    } finally {
      await agent(`rm -f '${d('system/hooks')}'`);
      await rm(hostDir, { recursive: true, force: true });
      await rm(configHome, { recursive: true, force: true });
    }
  });

  it('never packs a host file into the build context while a folder in it flips to a link (many rounds)', async () => {
    const hostDir = await mkdtemp(path.join(os.tmpdir(), 'ak-canary-build-'));
    await writeFile(path.join(hostDir, 'f'), `${SECRET}\n`);
    await mkdir(d('system/container/sub'), { recursive: true });
    await writeFile(d('system/container/sub/f'), 'agent file\n');
    const race = racer('build', `cd '${d('system/container')}' && mv sub sub.real && ln -s '${hostDir}' sub && rm sub && mv sub.real sub; true`);
    const seen: string[] = [];
    let hostRounds = 0;
    let rounds = 0;
    try {
      rounds = await raceAgainst(race, async () => {
        hostRounds++;
        try {
          const context = await buildContext(test.instance);
          await contextHash(context);
          const chunks: Buffer[] = [];
          for await (const chunk of packContext(context)) chunks.push(chunk as Buffer);
          seen.push(Buffer.concat(chunks).toString('latin1'));
        } catch (error) {
          seen.push((error as Error).message);
        }
      });
    } finally {
      await race.stop();
      await rm(hostDir, { recursive: true, force: true });
    }
    expect(seen.join('\n')).not.toContain(SECRET);
    // Between swaps the honest context still packs.
    const chunks: Buffer[] = [];
    for await (const chunk of packContext(await buildContext(test.instance))) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString('latin1')).toContain('agent file');
    expect(rounds).toBeGreaterThanOrEqual(200);
    expect(seen).toHaveLength(hostRounds);
  });
});
