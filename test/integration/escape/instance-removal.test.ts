import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { instancePaths } from '../../../src/config/paths.js';
import { silentLogger } from '../../../src/log/logger.js';
import { containerName } from '../../../src/sandbox/container/container.js';
import { DockerSandbox } from '../../../src/sandbox/docker-sandbox.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { LABEL } from '../../../src/sandbox/engine/image.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { removeUntrustedTree } from '../../../src/util/untrusted-remove.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { TEST_IMAGE, type TestInstance, createTestInstance, removeEngineResources, withTestBases } from '../../helpers/test-instance.js';
import { KERNEL_RUNNER_BIN } from '../runner/tick-helpers.js';
import { pollUntil } from '../../helpers/poll.js';

vi.setConfig({ testTimeout: 240_000 });

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const AGENT_KERNEL_BIN = path.join(ROOT, 'dist', 'cli', 'agent-kernel.js');
/** The agent's side: plants a random tree and swaps its folders for links to a host folder (renameat2 RENAME_EXCHANGE). */
const RACER = readFileSync(path.join(ROOT, 'test', 'fixtures', 'escape', 'tree-racer.py'), 'utf8');
const SECRET = 'CANARY-host-secret-5d1e';
/** Walks of the host against one racing agent (each ends, however fast the agent swaps: they fit in 100 s). */
const WALKS = 12;
const CANARY_FILES = ['secret', ...Array.from({ length: 30 }, (_, i) => `keep-${String(i).padStart(2, '0')}`)];

let canaryDir: string;

/** A host folder the container cannot see, full of files a path-based rm -rf would delete through a swapped link. */
async function makeCanary(): Promise<void> {
  canaryDir = await mkdtemp(path.join(os.tmpdir(), 'ak-canary-rm-'));
  for (const name of CANARY_FILES) await writeFile(path.join(canaryDir, name), `${SECRET} ${name}\n`);
}

async function canaryUntouched(): Promise<void> {
  expect((await readdir(canaryDir)).sort()).toEqual([...CANARY_FILES].sort());
  for (const name of CANARY_FILES) expect(await readFile(path.join(canaryDir, name), 'utf8')).toBe(`${SECRET} ${name}\n`);
}

/** The agent, root in its container: the racer script with these arguments. */
function racer(sandbox: Sandbox, args: string[], timeoutMs = 120_000) {
  return sandbox.run(['python3', '-c', RACER, ...args], { timeoutMs });
}

async function swapsSoFar(sandbox: Sandbox, countFile: string): Promise<number> {
  return Number((await sandbox.run(['cat', countFile])).stdout.trim()) || 0;
}

/**
 * The agent is root in its container and writes the whole data directory, so a tree removed from
 * the host is hostile to the last entry: while the host walks it, the agent swaps each folder for
 * a link to a host folder it cannot see. A walk that checks and then uses a path (Node's fs.rm
 * recursive) lists and deletes the host folder's files through the link.
 */
describeWithEngine('escape: removing a data directory the agent writes', () => {
  let test: TestInstance;
  let sandbox: Sandbox;

  beforeAll(async () => {
    await makeCanary();
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
    expect((await sandbox.run(['test', '-e', canaryDir])).exitCode).not.toBe(0);
  });
  afterAll(async () => {
    await test?.cleanup();
    await rm(canaryDir, { recursive: true, force: true });
  });

  // Each seed plants another random tree (links absolute and climbing, FIFOs, sockets, hard links, a folder mode 000, swap pairs at any depth).
  it.each([1, 2, 3, 4, 5, 6])('removes a random tree (seed %i) while the agent swaps its folders for links to a host folder, and nothing outside it', async (seed) => {
    const tree = `victim-${seed}`;
    const where = path.join(test.dataDir, tree);
    const planted = await racer(sandbox, ['plant', where, canaryDir, String(seed)]);
    expect(planted.stderr).toBe('');
    expect(planted.exitCode).toBe(0);
    const countFile = `/tmp/race-${seed}.count`;
    const stopFile = `/tmp/race-${seed}.stop`;
    // The agent swaps until told to stop, so the host walks against it however slow this machine is.
    const race = racer(sandbox, ['race', where, canaryDir, '170', countFile, stopFile], 180_000);
    await pollUntil(async () => (await swapsSoFar(sandbox, countFile)) > 1000, 'the agent swapping folders for links', { timeoutMs: 60_000 });

    // While the agent swaps (and plants again what was removed): the host removes what it can, again and again,
    // within the tree only, and never hangs (FIFOs are never opened).
    const swapsBefore = await swapsSoFar(sandbox, countFile);
    const swapsDuring = async () => (await swapsSoFar(sandbox, countFile)) - swapsBefore;
    const deadline = Date.now() + 100_000;
    let walks = 0;
    while (Date.now() < deadline && (walks < WALKS || (await swapsDuring()) < 10_000)) {
      await removeUntrustedTree(test.dataDir, tree);
      walks++;
    }
    const swapped = await swapsDuring();
    expect((await sandbox.run(['touch', stopFile])).exitCode).toBe(0);
    expect((await race).exitCode).toBe(0);
    await canaryUntouched();
    expect(swapped).toBeGreaterThanOrEqual(10_000);
    expect(walks, `${walks} walks in 100 s against the agent`).toBeGreaterThanOrEqual(WALKS);

    // Once the agent stops, the tree goes whole.
    expect(await removeUntrustedTree(test.dataDir, tree)).toEqual({ removed: true, left: [] });
    expect((await sandbox.run(['test', '-e', where])).exitCode).not.toBe(0);
    await canaryUntouched();
  });
});

/** `kernel-runner rm <name> --data` as a person runs it, while the instance's container races. */
describeWithEngine('escape: kernel-runner rm --data against an agent that races it', () => {
  let home: string;
  let env: NodeJS.ProcessEnv;
  let otherEngine: http.Server;
  let otherEngineSocket: string;
  const names: string[] = [];

  function run(bin: string, args: string[], runEnv = env): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, [bin, ...args], { env: runEnv, timeout: 240_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  }

  /** An instance made as the README says, its container up on the engine its operator's file names, the agent racing inside. */
  async function racingInstance(name: string, dir: string, operator: Record<string, unknown>): Promise<{ sandbox: Sandbox; race: Promise<unknown> }> {
    names.push(name);
    expect((await run(KERNEL_RUNNER_BIN, ['init', name, dir])).code).toBe(0);
    await writeFile(path.join(dir, 'system/container/Containerfile'), `FROM ${TEST_IMAGE}\n`);
    await writeFile(instancePaths(name, dir, env).operatorConfig, JSON.stringify(withTestBases(operator)));
    const up = await run(AGENT_KERNEL_BIN, ['container', 'up', name, '--quiet']);
    expect(up.stderr).toBe('');
    expect(up.code).toBe(0);
    const sandbox = new DockerSandbox({ engine: await connectEngine(), containerName: containerName(name), cwd: dir });
    expect((await racer(sandbox, ['plant', path.join(dir, 'work'), canaryDir, '7'])).exitCode).toBe(0);
    const countFile = '/tmp/race.count';
    // Until the container is removed, or the data directory is gone.
    const race = racer(sandbox, ['race', path.join(dir, 'work'), canaryDir, '120', countFile], 180_000).catch(() => undefined);
    await pollUntil(async () => (await swapsSoFar(sandbox, countFile)) > 1000, 'the agent swapping folders for links');
    return { sandbox, race };
  }

  async function engineHolds(name: string): Promise<string[]> {
    const { docker } = await connectEngine();
    const containers = await docker.listContainers({ all: true, filters: { label: [`${LABEL.instance}=${name}`] } });
    return containers.map((c) => `container ${c.Names[0]}`);
  }

  beforeAll(async () => {
    await makeCanary();
    home = await mkdtemp(path.join(os.tmpdir(), 'ak-rm-race-'));
    env = { ...process.env, HOME: home, AGENT_KERNEL_CONFIG_DIR: path.join(home, 'config'), AGENT_KERNEL_LOG_LEVEL: 'warn' };
    // Another engine, the one DOCKER_HOST names: it answers, and holds nothing of the instance.
    otherEngineSocket = path.join(home, 'other-engine.sock');
    otherEngine = http.createServer((req, res) => {
      const route = new URL(req.url ?? '/', 'http://engine').pathname.replace(/^\/v[\d.]+/, '');
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'api-version': '1.41' });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      };
      if (route === '/_ping') return reply(200, 'OK');
      if (route === '/version') return reply(200, { Version: '20.10.24', ApiVersion: '1.41', Components: [] });
      if (route === '/containers/json' || route === '/images/json') return reply(200, []);
      if (route === '/volumes') return reply(200, { Volumes: [], Warnings: [] });
      return reply(404, { message: `No such object: ${route}` });
    });
    await new Promise<void>((resolve) => otherEngine.listen(otherEngineSocket, resolve));
  });
  afterAll(async () => {
    for (const name of names) await removeEngineResources(name);
    await new Promise((resolve) => otherEngine?.close(resolve));
    await rm(home, { recursive: true, force: true });
    await rm(canaryDir, { recursive: true, force: true });
  });

  it('asks the engine the operator named, whatever the agent did to its own file, and removes the container before the data', async () => {
    const name = `t-rmr-${Math.random().toString(16).slice(2, 8)}`;
    const dir = path.join(home, 'agents', name);
    const engine = await connectEngine();
    const { sandbox, race } = await racingInstance(name, dir, { container: { network: 'none', engine_socket: engine.address } });
    // The agent breaks its own configuration file: the operator's still says where the container is.
    expect((await sandbox.run(['sh', '-c', `echo '{' > ${dir}/system/agent_config.json`])).exitCode).toBe(0);

    const removed = await run(KERNEL_RUNNER_BIN, ['rm', name, '--data'], { ...env, DOCKER_HOST: `unix://${otherEngineSocket}` });
    await race;
    expect(removed.stderr).toBe('');
    expect(removed.stdout).toContain(`  container agent-kernel-${name}\n`);
    expect(removed.stdout).toContain(`  data ${dir}\n`);
    expect(await engineHolds(name)).toEqual([]);
    await canaryUntouched();
  });

  it('removed through another path to the folder (a link), it is the registered instance whose container goes first', async () => {
    const name = `t-rmr-${Math.random().toString(16).slice(2, 8)}`;
    // Registered under a name that is not the folder's.
    const dir = path.join(home, 'agents', `${name}-data`);
    await mkdir(path.dirname(dir), { recursive: true });
    const { race } = await racingInstance(name, dir, { container: { network: 'none' } });
    const alias = path.join(home, 'alias');
    await symlink(path.dirname(dir), alias);

    const removed = await run(KERNEL_RUNNER_BIN, ['rm', path.join(alias, path.basename(dir)), '--data']);
    await race;
    expect(removed.stderr).toBe('');
    expect(removed.stdout).toContain(`Removed ${name}:\n  container agent-kernel-${name}\n`);
    expect(removed.stdout).toContain(`  data ${dir}\n`);
    expect(await engineHolds(name)).toEqual([]);
    await canaryUntouched();
  });
});
