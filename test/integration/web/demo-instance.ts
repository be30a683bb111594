import { execFile, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = (name: string) => path.join(ROOT, 'dist', 'cli', `${name}.js`);
const FAKE_CLAUDE = path.join(ROOT, 'test', 'fixtures', 'fake-claude', 'bin', 'claude');

export interface DemoInstance {
  name: string;
  /** The operator's environment: its own config, state and home folders under the root. */
  env: NodeJS.ProcessEnv;
  dataDir: string;
  stateDir: string;
}

/** `kernel-runner ARGS` (or `agent-kernel`) as the operator runs it, in the demo's environment. */
export async function operator(demo: Pick<DemoInstance, 'env'>, bin: 'kernel-runner' | 'agent-kernel', ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [BIN(bin), ...args], { env: demo.env, timeout: 120_000 });
  return stdout;
}

/** A tick whose fake model plays `name` (fake-claude.mjs); a failing one is part of the story. */
async function scenario(demo: DemoInstance, name: string, env: NodeJS.ProcessEnv = {}): Promise<void> {
  await run(process.execPath, [BIN('kernel-runner'), 'tick', demo.name], { env: { ...demo.env, ...env, FAKE_CLAUDE_SCENARIO: name }, timeout: 120_000 }).catch(() => undefined);
}

/**
 * An instance made as an operator makes one (`kernel-runner init`, then ticks and `send`), on
 * the host backend with the fake Claude Code: real ticks, recordings, transcripts, events and
 * post-office records for the web view to show. Ticks: 1 works in a terminal, 2 gets the
 * operator's message and works again, 3 runs a command in TTY 0 (its screen), 4 is not logged in
 * (fails and pauses the instance); then one message stays queued.
 */
export async function demoInstance(root: string, name = 'demo'): Promise<DemoInstance> {
  const home = path.join(root, 'home');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    AGENT_KERNEL_CONFIG_DIR: path.join(root, 'config'),
    AGENT_KERNEL_STATE_DIR: path.join(root, 'state'),
    FAKE_CLAUDE_STATE_DIR: path.join(root, 'fake'),
    AGENT_KERNEL_LOG_FORMAT: 'json',
  };
  delete env.FAKE_CLAUDE_SCENARIO;
  delete env.ANTHROPIC_API_KEY;
  delete env.CLAUDE_CODE_OAUTH_TOKEN;
  await mkdir(home, { recursive: true });
  const demo: DemoInstance = { name, env, dataDir: path.join(root, 'data'), stateDir: path.join(root, 'state', 'instances', name) };
  await operator(demo, 'kernel-runner', 'init', name, demo.dataDir);
  const config = {
    container: { backend: 'host' },
    runner: { harness: 'claude-code', command: FAKE_CLAUDE, retry: { max_attempts: 1, initial: '200ms', max: '1s' }, idle_timeout: '20s', grace_period: '3s' },
  };
  await writeFile(path.join(root, 'config', 'instances', `${name}.json`), JSON.stringify(config, null, 2));
  await operator(demo, 'kernel-runner', 'tick', name);
  await operator(demo, 'kernel-runner', 'send', name, 'Please look at the disk usage of /var and tell me what grows.');
  await operator(demo, 'kernel-runner', 'tick', name);
  await scenario(demo, 'start-command', { FAKE_CLAUDE_COMMAND: 'df -h / /tmp; ls -l /etc | head -n 25' });
  await scenario(demo, 'not-logged-in');
  await operator(demo, 'kernel-runner', 'send', name, '--from', 'alice', 'When you are back: rotate the logs in /var/log/app.').catch(() => undefined);
  return demo;
}

/**
 * `agent-kernel kernel NAME` as watch runs it: the one process that reads the demo's terminals
 * (re-adopted from tmux) and shows them to the web view. Resolves once it prints READY.
 */
export async function startDemoKernel(demo: DemoInstance): Promise<{ stop(): Promise<void> }> {
  const child = spawn(process.execPath, [BIN('agent-kernel'), 'kernel', demo.name], { env: demo.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.startsWith('READY ')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`agent-kernel kernel exited with ${code}: ${err.slice(-2000)}`)));
  });
  return { stop };
}
