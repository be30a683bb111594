import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { instancePaths } from '../../../../src/config/paths.js';
import { registerInstance } from '../../../../src/config/registry.js';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const BIN = path.join(ROOT, 'dist', 'cli', 'kernel-runner.js');

function systemdAnalyze(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const candidate = path.join(dir, 'systemd-analyze');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

let home: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'ak-install-'));
  env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    AGENT_KERNEL_CONFIG_DIR: path.join(home, 'agent-kernel'),
    DOCKER_HOST: 'unix:///run/user/1000/docker.sock',
  };
  delete env.ANTHROPIC_API_KEY;
  await mkdir(path.join(home, 'data with space'), { recursive: true });
  await registerInstance('svc-1', path.join(home, 'data with space'), env);
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('kernel-runner install / uninstall', () => {
  it('writes a user unit that runs watch with absolute paths and the environment, and prints how to enable it', async () => {
    const { stdout } = await run(process.execPath, [BIN, 'install', 'svc-1'], { env });
    const file = path.join(home, '.config', 'systemd', 'user', 'agent-kernel-svc-1.service');
    expect(stdout).toContain(`Wrote ${file}`);
    expect(stdout).toContain('systemctl --user daemon-reload && systemctl --user enable --now agent-kernel-svc-1.service');
    expect(stdout).toContain('loginctl enable-linger');

    const unit = await readFile(file, 'utf8');
    expect(unit).toContain(`ExecStart=${process.execPath} ${BIN} watch svc-1`);
    expect(unit).toContain('Restart=on-failure');
    // The watch runs in host-private state, never in the data directory the container writes.
    expect(unit).toContain(`WorkingDirectory=${instancePaths('svc-1', path.join(home, 'data with space'), env).stateRoot}\n`);
    expect(unit).not.toContain(`WorkingDirectory=${path.join(home, 'data with space')}\n`);
    expect(unit).toContain('Environment="DOCKER_HOST=unix:///run/user/1000/docker.sock"');
    expect(unit).toContain(`Environment="AGENT_KERNEL_CONFIG_DIR=${path.join(home, 'agent-kernel')}"`);
    expect(unit).toContain('WantedBy=default.target');
    expect(unit).not.toMatch(/API_KEY|TOKEN/);
    expect((await stat(file)).mode & 0o777).toBe(0o644);
  });

  it('passes systemd-analyze verify', async () => {
    const analyze = systemdAnalyze();
    if (!analyze) {
      // Debian's "systemd" package provides it; without it this check cannot run here.
      console.warn('systemd-analyze is not installed: unit verification skipped (apt-get install systemd)');
      return;
    }
    await run(process.execPath, [BIN, 'install', 'svc-1'], { env });
    const file = path.join(home, '.config', 'systemd', 'user', 'agent-kernel-svc-1.service');
    // --user needs a runtime directory; a private one keeps it off the real session.
    const runtime = path.join(home, 'runtime');
    await mkdir(runtime);
    await chmod(runtime, 0o700);
    const result = await run(analyze, ['verify', '--user', file], { env: { ...env, XDG_RUNTIME_DIR: runtime } }).then(
      (r) => ({ code: 0, output: r.stdout + r.stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
    );
    expect(result.output.trim()).toBe('');
    expect(result.code).toBe(0);
  });

  it('verification catches a broken unit (the check can fail)', async () => {
    const analyze = systemdAnalyze();
    if (!analyze) return;
    await run(process.execPath, [BIN, 'install', 'svc-1'], { env });
    const file = path.join(home, '.config', 'systemd', 'user', 'agent-kernel-svc-1.service');
    const broken = (await readFile(file, 'utf8')).replace(process.execPath, '/nonexistent/node');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(file, broken);
    const runtime = path.join(home, 'runtime');
    await mkdir(runtime);
    await chmod(runtime, 0o700);
    const result = await run(analyze, ['verify', '--user', file], { env: { ...env, XDG_RUNTIME_DIR: runtime } }).then(
      (r) => r.stdout + r.stderr,
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    );
    expect(result).toMatch(/is not executable/);
  });

  it('uninstall removes the unit (and its enable link); a second uninstall says there is nothing', async () => {
    await run(process.execPath, [BIN, 'install', 'svc-1'], { env });
    const file = path.join(home, '.config', 'systemd', 'user', 'agent-kernel-svc-1.service');
    const first = await run(process.execPath, [BIN, 'uninstall', 'svc-1'], { env });
    expect(first.stdout).toContain(`Removed ${file}`);
    expect(existsSync(file)).toBe(false);
    const second = await run(process.execPath, [BIN, 'uninstall', 'svc-1'], { env });
    expect(second.stdout).toContain('nothing to remove');
  });

  it('refuses an unknown instance with a clear error', async () => {
    const error = await run(process.execPath, [BIN, 'install', 'nope'], { env }).catch((e: { code: number; stderr: string }) => e);
    expect(error).toMatchObject({ code: 2 });
    expect((error as { stderr: string }).stderr).toMatch(/No instance named "nope"/);
  });
});
