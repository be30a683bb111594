import { execFile } from 'node:child_process';
import { lstat, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { instancePaths } from '../../../src/config/paths.js';
import { configHome } from '../../../src/config/registry.js';
import { resolveToken } from '../../../src/server/http-auth.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { removeEngineResources, TEST_IMAGE } from '../../helpers/test-instance.js';
import { FAKE_CLAUDE, KERNEL_RUNNER_BIN } from './tick-helpers.js';

vi.setConfig({ testTimeout: 240_000 });
const execFileAsync = promisify(execFile);

/** Every entry under `dir` (itself included), as `mode kind path`. */
async function walk(dir: string): Promise<{ file: string; mode: number; dir: boolean }[]> {
  const info = await lstat(dir);
  const out = [{ file: dir, mode: info.mode & 0o777, dir: info.isDirectory() }];
  if (info.isDirectory()) for (const name of await readdir(dir)) out.push(...(await walk(path.join(dir, name))));
  return out;
}

const octal = (mode: number) => mode.toString(8).padStart(4, '0');

describeWithEngine('operator files are private (0600 files in 0700 folders)', () => {
  const name = `t-private-${Math.random().toString(16).slice(2, 8)}`;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;

  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'ak-private-'));
    // Fresh config and state homes that nothing made before: everything in them is this test's workflow's doing.
    env = {
      ...process.env,
      HOME: home,
      AGENT_KERNEL_CONFIG_DIR: path.join(home, 'config', 'agent-kernel'),
      AGENT_KERNEL_STATE_DIR: path.join(home, 'state', 'agent-kernel'),
      CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
      FAKE_CLAUDE_STATE_DIR: path.join(home, 'fake-state'),
    };
    dataDir = path.join(home, 'agents', name);
    const runner = (...args: string[]) => execFileAsync(process.execPath, [KERNEL_RUNNER_BIN, ...args], { env, timeout: 240_000 });
    await runner('init', name, dataDir);
    // Network none: its build has no network for apt-get, so the test image global-setup.ts built.
    await writeFile(path.join(dataDir, 'system/container/Containerfile'), `FROM ${TEST_IMAGE}\n`);
    // Edited in place, as an operator does (the file keeps its mode).
    await writeFile(instancePaths(name, dataDir, env).operatorConfig, JSON.stringify({ container: { network: 'none', base_images: [TEST_IMAGE] }, runner: { command: FAKE_CLAUDE } }));
    await runner('tick', name);
    await runner('send', name, 'hello from the operator');
    // What `agent-kernel serve --http` does for its token when none is given.
    await resolveToken({ env: {}, defaultFile: path.join(configHome(env), 'tokens', `${name}.token`) });
  });
  afterAll(async () => {
    await removeEngineResources(name);
    await rm(home, { recursive: true, force: true });
  });

  it('in the config home: the operator file, the registry, the token and their folders', async () => {
    const entries = await walk(configHome(env));
    const files = entries.filter((e) => !e.dir).map((e) => path.relative(configHome(env), e.file));
    expect(files.sort()).toEqual(['instances.json', `instances/${name}.json`, `tokens/${name}.token`]);
    expect(entries.map((e) => `${octal(e.mode)} ${e.file}`)).toEqual(entries.map((e) => `${e.dir ? '0700' : '0600'} ${e.file}`));
  });

  it('in the state home: the instance\'s own files for the host alone; what the agent is shown readable, never writable, by others', async () => {
    const paths = instancePaths(name, dataDir, env);
    const views = paths.showToContainer.map((v) => v.source);
    const entries = await walk(path.dirname(path.dirname(paths.stateRoot)));
    const shown = (file: string) => views.some((v) => file === v || file.startsWith(`${v}/`));
    // The harness's private home (opencode, Gemini CLI, Codex CLI) holds what the CLI writes there with modes of its
    // own choosing: the home itself is 0700, so nothing in it is reachable by others.
    const inHarnessHome = (file: string) => file.startsWith(`${paths.harnessHome}/`);
    expect(entries.find((e) => e.file === paths.harnessHome)?.mode).toBe(0o700);
    const hostOnly = entries.filter((e) => !shown(e.file) && !inHarnessHome(e.file));
    expect(hostOnly.length).toBeGreaterThanOrEqual(8);
    expect(hostOnly.filter((e) => (e.mode & 0o077) !== 0).map((e) => `${octal(e.mode)} ${e.file}`)).toEqual([]);
    expect(entries.filter((e) => shown(e.file) && (e.mode & 0o022) !== 0).map((e) => `${octal(e.mode)} ${e.file}`)).toEqual([]);
  });
});
