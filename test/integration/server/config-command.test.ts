import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instancePaths } from '../../../src/config/paths.js';
import { BIN, ensureBuilt } from './helpers.js';
import { withTestBases } from '../../helpers/test-instance.js';

const run = promisify(execFile);

/** `agent-kernel config`: what applies, where it comes from, and adopting what the agent set (the real bin). */
describe('agent-kernel config', () => {
  let home: string;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  const cli = (...args: string[]) => run(process.execPath, [BIN, 'config', ...args], { env });

  beforeAll(async () => {
    await ensureBuilt();
    home = await mkdtemp(path.join(os.tmpdir(), 'ak-config-cmd-'));
    env = { ...process.env, AGENT_KERNEL_CONFIG_DIR: path.join(home, 'config'), AGENT_KERNEL_STATE_DIR: path.join(home, 'state') };
    dataDir = path.join(home, 'scout');
    await run(process.execPath, [BIN.replace('agent-kernel.js', 'kernel-runner.js'), 'init', 'scout', dataDir], { env });
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('shows both files and what is in effect; names fields of the agent file it ignored', async () => {
    await writeFile(path.join(dataDir, 'system', 'agent_config.json'), JSON.stringify({ tty: { cols: 99 }, runner: { command: '/opt/other-claude', permission_mode: 'bypassPermissions' } }));
    const { stdout } = await cli('scout');
    const operatorFile = instancePaths('scout', dataDir, env).operatorConfig;
    expect(stdout).toContain(`operator's file (host effect, out of the agent's reach): ${operatorFile}`);
    expect(stdout).toContain('system/agent_config.json sets runner.command, runner.permission_mode, which would change what the host does');
    const json = JSON.parse((await cli('scout', '--json')).stdout) as { ignored: string[]; config: { tty: { cols: number }; runner: { permission_mode: string } } };
    expect(json.ignored).toEqual(['runner.command', 'runner.permission_mode']);
    expect(json.config.tty.cols).toBe(99);
    expect(json.config.runner.permission_mode).toBe('acceptEdits');
  });

  it('--adopt copies the ignored fields into the operator file, keeping its own', async () => {
    const { stdout } = await cli('scout', '--adopt');
    expect(stdout).toContain('Adopted into');
    const operator = JSON.parse(await readFile(instancePaths('scout', dataDir, env).operatorConfig, 'utf8')) as { runner: Record<string, unknown> };
    expect(operator.runner).toEqual({ harness: 'claude-code', command: '/opt/other-claude', permission_mode: 'bypassPermissions' });
    const json = JSON.parse((await cli('scout', '--json')).stdout) as { ignored: string[]; config: { runner: { permission_mode: string } } };
    expect(json.ignored).toEqual([]);
    expect(json.config.runner.permission_mode).toBe('bypassPermissions');
    expect((await cli('scout', '--adopt')).stdout).toContain('Nothing to adopt');
  });

  it('a broken operator file is an error naming it and the field', async () => {
    await writeFile(instancePaths('scout', dataDir, env).operatorConfig, JSON.stringify(withTestBases({ runner: { restart: 'sometimes' } })));
    const failed = await cli('scout').catch((error: { code: number; stderr: string }) => error);
    expect((failed as { code: number }).code).toBe(2);
    expect((failed as { stderr: string }).stderr).toMatch(/instances\/scout\.json: runner\.restart: /);
  });
});
