import { readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Instance } from '../../../src/config/instance.js';
import { registerInstance } from '../../../src/config/registry.js';
import { createLogger } from '../../../src/log/logger.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';
import { pollUntil } from '../../helpers/poll.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const FAKE_CLAUDE = path.join(ROOT, 'test', 'fixtures', 'fake-claude', 'bin', 'claude');
export const REAL_CLAUDE = path.join(ROOT, 'node_modules', '.bin', 'claude');
export const KERNEL_RUNNER_BIN = path.join(ROOT, 'dist', 'cli', 'kernel-runner.js');

export interface TickTestInstance extends TestInstance {
  /** HOME and CLAUDE_CONFIG_DIR for the harness, and the registry, all in a temp dir. */
  env: NodeJS.ProcessEnv;
  home: string;
  pidFile: string;
  logger: ReturnType<typeof createLogger>;
  reloaded(): Promise<Instance>;
  writeHook(kind: 'pre-tick' | 'pre-stop' | 'post-tick', name: string, script: string): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * A registered throw-away instance whose harness is the fake claude (or the one given), with
 * fast retries and short watchdogs. The registry is private to the test (AGENT_KERNEL_CONFIG_DIR),
 * so `agent-kernel serve <dir>` started by the harness finds the same instance name.
 */
export async function tickTestInstance(runner: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<TickTestInstance> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'ak-home-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    AGENT_KERNEL_CONFIG_DIR: path.join(home, 'agent-kernel'),
    FAKE_CLAUDE_STATE_DIR: path.join(home, 'fake-state'),
  };
  const pidFile = path.join(home, 'pids.json');
  env.FAKE_CLAUDE_PID_FILE = pidFile;
  delete env.ANTHROPIC_API_KEY;
  delete env.CLAUDE_CODE_OAUTH_TOKEN;
  const test = await createTestInstance({
    configDir: env.AGENT_KERNEL_CONFIG_DIR,
    config: {
      // Ticks need no network: keep the tests independent of the engine's bridge.
      container: { network: 'none' },
      ...extra,
      runner: {
        command: FAKE_CLAUDE,
        retry: { max_attempts: 3, initial: '200ms', max: '1s' },
        idle_timeout: '20s',
        grace_period: '3s',
        ...runner,
      },
    },
  });
  await registerInstance(test.name, test.dataDir, env);
  return {
    ...test,
    env,
    home,
    pidFile,
    logger: createLogger({ process: 'tick-test', stderr: false, level: 'silent' }),
    reloaded: test.reload,
    async writeHook(kind, name, script) {
      const dir = path.join(test.dataDir, 'system', 'hooks', kind);
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, name), script);
      await chmod(path.join(dir, name), 0o755);
    },
    async dispose() {
      // A watch killed by a test leaves its kernel running (its own process group): stop it first.
      await stopKernel(test.instance.paths.instanceLock);
      await test.cleanup();
      await rm(home, { recursive: true, force: true });
    },
  };
}

export async function readJsonLines(file: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Running, not a zombie: a killed orphan stays one until init reaps it, which on a busy machine takes a while. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(') ') + 2));
  } catch {
    return false;
  }
}

/** The processes a session left: the fake's PID and its MCP servers' PIDs, that are still alive. */
export async function survivors(pidFile: string): Promise<number[]> {
  const pids = JSON.parse(await readFile(pidFile, 'utf8')) as { claude: number; servers: number[] };
  return [pids.claude, ...pids.servers].filter(isAlive);
}

/** Stop the instance's kernel, if one holds the instance lock (SIGTERM, then SIGKILL). */
export async function stopKernel(lockFile: string): Promise<void> {
  let holder: { pid?: number; role?: string } | undefined;
  try {
    holder = JSON.parse(await readFile(lockFile, 'utf8')) as { pid?: number; role?: string };
  } catch {
    return;
  }
  const pid = holder.pid;
  if (holder.role !== 'kernel' || pid === undefined || !isAlive(pid)) return;
  process.kill(pid, 'SIGTERM');
  await pollUntil(() => !isAlive(pid), `kernel ${pid} to stop`, { timeoutMs: 20_000 }).catch(() => process.kill(pid, 'SIGKILL'));
}
