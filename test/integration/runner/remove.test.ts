import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { instancePaths } from '../../../src/config/paths.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { LABEL } from '../../../src/sandbox/engine/image.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { removeEngineResources, TEST_IMAGE } from '../../helpers/test-instance.js';
import { KERNEL_RUNNER_BIN } from './tick-helpers.js';

vi.setConfig({ testTimeout: 240_000 });

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const AGENT_KERNEL_BIN = path.join(ROOT, 'dist', 'cli', 'agent-kernel.js');

let home: string;
let env: NodeJS.ProcessEnv;
const names: string[] = [];

function run(bin: string, args: string[], input = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [bin, ...args], { env, timeout: 240_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    child.stdin?.end(input);
  });
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** An instance made as the README says (init), with its container up, a secret and an HTTP token. */
async function makeInstance(): Promise<{ name: string; dir: string }> {
  const name = `t-rm-${Math.random().toString(16).slice(2, 8)}`;
  names.push(name);
  const dir = path.join(home, 'agents', name);
  expect((await run(KERNEL_RUNNER_BIN, ['init', name, dir])).code).toBe(0);
  await writeFile(path.join(dir, 'system/container/Containerfile'), `FROM ${TEST_IMAGE}\n`);
  await writeFile(instancePaths(name, dir, env).operatorConfig, JSON.stringify({ container: { network: 'none', base_images: [TEST_IMAGE] } }));
  const up = await run(AGENT_KERNEL_BIN, ['container', 'up', name, '--quiet']);
  expect(up.stderr).toBe('');
  expect(up.code).toBe(0);
  expect((await run(KERNEL_RUNNER_BIN, ['secret', 'set', name, 'ANTHROPIC_API_KEY'], 'sk-ant-api03-for-the-rm-test\n')).code).toBe(0);
  await mkdir(path.join(home, 'config', 'tokens'), { recursive: true });
  await writeFile(path.join(home, 'config', 'tokens', `${name}.token`), 'a-token-of-the-instance\n');
  return { name, dir };
}

async function engineHolds(name: string): Promise<string[]> {
  const { docker } = await connectEngine();
  const label = { label: [`${LABEL.instance}=${name}`] };
  const containers = await docker.listContainers({ all: true, filters: label });
  const images = await docker.listImages({ filters: label });
  return [...containers.map((c) => `container ${c.Names[0]}`), ...images.map((i) => `image ${i.Id}`)];
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'ak-rm-'));
  env = { ...process.env, HOME: home, AGENT_KERNEL_CONFIG_DIR: path.join(home, 'config'), AGENT_KERNEL_LOG_LEVEL: 'warn' };
});

afterAll(async () => {
  for (const name of names) await removeEngineResources(name);
  await rm(home, { recursive: true, force: true });
});

describeWithEngine('kernel-runner rm', () => {
  it('removes what the engine holds, the state, the operator file, secrets, token and name; the data stays', async () => {
    const { name, dir } = await makeInstance();
    const paths = instancePaths(name, dir, env);
    expect(await engineHolds(name)).not.toEqual([]);
    await mkdir(paths.logs, { recursive: true });
    await writeFile(paths.tickLog(1), '{}\n');

    const removed = await run(KERNEL_RUNNER_BIN, ['rm', name]);
    expect(removed.stderr).toBe('');
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`Removed ${name}:\n  container agent-kernel-${name}\n`);
    expect(removed.stdout).toContain(`  state (logs, transcripts, recordings, terminal archives) ${paths.stateRoot}\n`);
    expect(removed.stdout).toContain(`  data ${dir} (kernel-runner rm ${name} --data removes it too)\n`);
    expect(await engineHolds(name)).toEqual([]);
    for (const gone of [paths.stateRoot, paths.operatorConfig, path.join(home, 'config', 'secrets', name), path.join(home, 'config', 'tokens', `${name}.token`)]) {
      expect(await exists(gone), gone).toBe(false);
    }
    expect(JSON.parse(await readFile(path.join(home, 'config', 'instances.json'), 'utf8')).instances).not.toHaveProperty(name);
    expect(await exists(path.join(dir, 'system', 'agent_config.json'))).toBe(true);
    expect((await run(KERNEL_RUNNER_BIN, ['ls'])).stdout).not.toContain(name);
    // The same name can be used again at once.
    expect((await run(KERNEL_RUNNER_BIN, ['init', name, dir])).code).toBe(0);
    expect((await run(KERNEL_RUNNER_BIN, ['rm', name])).code).toBe(0);
  });

  it('is refused while something uses the instance, and removes nothing', async () => {
    const { name, dir } = await makeInstance();
    const paths = instancePaths(name, dir, env);
    // A live process holds the tick lock (as a running tick does).
    await writeFile(paths.tickLock, JSON.stringify({ pid: process.pid, started: new Date().toISOString() }));
    const refused = await run(KERNEL_RUNNER_BIN, ['rm', name]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`kernel-runner rm: ${name} is in use, nothing removed:\n  a tick runs (PID ${process.pid})`);
    expect(await engineHolds(name)).not.toEqual([]);
    expect(await exists(paths.operatorConfig)).toBe(true);
    await rm(paths.tickLock);
    expect((await run(KERNEL_RUNNER_BIN, ['rm', name])).code).toBe(0);
  });

  it('--data removes the data directory without following a link the agent planted in it', async () => {
    const { name, dir } = await makeInstance();
    const canary = path.join(home, 'host-canary');
    await mkdir(canary);
    await writeFile(path.join(canary, 'keep'), 'host file\n');
    await symlink(canary, path.join(dir, 'planted-link'));
    await symlink(path.join(canary, 'keep'), path.join(dir, 'system', 'paused'));
    const removed = await run(KERNEL_RUNNER_BIN, ['rm', name, '--data']);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`  data ${dir}\n`);
    expect(await exists(dir)).toBe(false);
    expect(await readFile(path.join(canary, 'keep'), 'utf8')).toBe('host file\n');
  });

  it('still removes an instance whose data directory was deleted by hand', async () => {
    const { name, dir } = await makeInstance();
    await rm(dir, { recursive: true, force: true });
    expect((await run(KERNEL_RUNNER_BIN, ['ls'])).stdout).toContain(name);
    const removed = await run(KERNEL_RUNNER_BIN, ['rm', name]);
    expect(removed.code).toBe(0);
    expect(await engineHolds(name)).toEqual([]);
    expect((await run(KERNEL_RUNNER_BIN, ['ls'])).stdout).not.toContain(name);
    expect((await run(KERNEL_RUNNER_BIN, ['rm', name])).stderr).toContain(`No instance named "${name}"`);
  });
});
