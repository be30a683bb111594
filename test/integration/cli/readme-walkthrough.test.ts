import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, realpathSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { removeEngineResources } from '../../helpers/test-instance.js';
import { pollUntil } from '../../helpers/poll.js';

/**
 * The person who runs it, on a fresh account: a copy of this checkout (its tracked files and
 * node_modules, as after `npm ci`), a new HOME made from /etc/skel, and nothing on PATH but the
 * system's. Every command of README.md's Quickstart and of docs/runner.md's kernel-runner section runs verbatim,
 * each in a new login shell (`env -i … bash -l -c`), in order. The differences, each for a
 * reason: the instance names `demo` and `scout` get a suffix (the engine is shared with other
 * checkouts); npm's global prefix is ~/.local (`~/.npmrc`, as for a user who cannot write
 * /usr: a test must not link into the machine's /usr/bin); the model API is a local server
 * that refuses every token (ANTHROPIC_BASE_URL: no network here, and a tick should fail fast
 * with the fix, as with a revoked token); `claude` and `claude setup-token` run in a terminal
 * (tmux) until they show their first screen; `watch` runs until it reports, then gets Ctrl-C;
 * `secret set` gets its token on stdin.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const SUFFIX = randomBytes(3).toString('hex');
const NAMES = { demo: `t-demo-${SUFFIX}`, scout: `t-scout-${SUFFIX}` };
const TOKEN = 'sk-ant-oat01-readme-walkthrough-token';
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

let home: string;
let repo: string;
let api: Server;
let apiUrl: string;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a new login: HOME and the system PATH (the machine's CA settings and engine address pass). */
function loginEnv(): string[] {
  const pass = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'DOCKER_HOST'].filter((name) => process.env[name]).map((name) => `${name}=${process.env[name]}`);
  return [`HOME=${home}`, `USER=${os.userInfo().username}`, `PATH=${SYSTEM_PATH}`, 'LANG=C.UTF-8', `AGENT_KERNEL_DEMO_NAME=${NAMES.demo}`, `ANTHROPIC_BASE_URL=${apiUrl}`, ...pass];
}

function quote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

function login(command: string, options: { input?: string; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn('env', ['-i', ...loginEnv(), 'bash', '-l', '-c', command], { cwd: repo, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 240_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Run `command` at a real terminal (tmux) in a login shell until the screen matches, then end it. */
let terminals = 0;
async function atTerminal(command: string, shows: RegExp): Promise<string> {
  // A tmux server of its own each time: one just killed may still hold the socket name.
  const socket = `ak-readme-${SUFFIX}-${++terminals}`;
  const tmux = (...args: string[]) => spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', env: { ...process.env, TMUX: '' } });
  const started = tmux('new-session', '-d', '-x', '120', '-y', '40', '-c', repo, ['env', '-i', ...loginEnv(), 'TERM=xterm-256color', 'bash', '-l'].map(quote).join(' '));
  if (started.status !== 0) throw new Error(`tmux new-session failed (exit ${started.status}): ${started.stderr}`);
  try {
    tmux('send-keys', '-t', '0', command, 'Enter');
    let screen = '';
    await pollUntil(() => shows.test((screen = tmux('capture-pane', '-p', '-t', '0').stdout)), `${command} to show ${shows}`, { timeoutMs: 60_000, intervalMs: 200 }).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; the screen:\n${screen}`);
    });
    return screen;
  } finally {
    tmux('kill-server');
  }
}

/** `watch` runs in the foreground: until it has said what it does, then Ctrl-C. */
async function runWatch(command: string): Promise<Ran> {
  const child: ChildProcess = spawn('env', ['-i', ...loginEnv(), 'bash', '-l', '-c', command], { cwd: repo, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await pollUntil(() => stderr.includes(`paused: no tick until kernel-runner resume ${NAMES.scout}`), 'watch to report the paused instance', { timeoutMs: 120_000, intervalMs: 200 }).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; it printed:\n${stderr}`);
  });
  process.kill(-child.pid!, 'SIGINT');
  return { code: await exited, stdout, stderr };
}

/** The bash commands of a README section, in order, with the comments after them dropped. */
function sectionCommands(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  const rest = readme.slice(start + heading.length + 2);
  const body = rest.slice(0, rest.search(/\n## /));
  return [...body.matchAll(/```bash\n([\s\S]*?)```/g)].flatMap((block) =>
    block[1]!
      .split('\n')
      .map((line) => line.replace(/\s+#\s.*$/, '').trim())
      .filter((line) => line !== ''),
  );
}

function named(command: string): string {
  return command.replace(/\bdemo\b/g, NAMES.demo).replace(/\bscout\b/g, NAMES.scout);
}

/** A copy of this checkout as a person has it: the tracked files, mtimes kept, and node_modules (hard links). */
function copyCheckout(to: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    const from = path.join(ROOT, file);
    if (!existsSync(from)) continue;
    mkdirSync(path.dirname(path.join(to, file)), { recursive: true });
    copyFileSync(from, path.join(to, file));
    const stat = statSync(from);
    utimesSync(path.join(to, file), stat.atime, stat.mtime);
    if (stat.mode & 0o111) execFileSync('chmod', ['+x', path.join(to, file)]);
  }
  // The folder itself, never a link to it (a git work tree's node_modules may be one): setup's `npm ci` in the copy
  // would empty the folder it points to, another checkout's.
  execFileSync('cp', ['-al', realpathSync(path.join(ROOT, 'node_modules')), path.join(to, 'node_modules')]);
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'ak-readme-home-'));
  repo = await mkdtemp(path.join(os.tmpdir(), 'ak-readme-repo-'));
  if (existsSync('/etc/skel')) cpSync('/etc/skel', home, { recursive: true });
  // A user whose npm global prefix is ~/.local; the machine's own npm settings for reaching the registry stay.
  const machine = ['cafile', 'nodedir'].flatMap((key) => {
    const value = spawnSync('npm', ['config', 'get', key], { encoding: 'utf8' }).stdout.trim();
    return value && value !== 'null' && value !== 'undefined' ? [`${key}=${value}`] : [];
  });
  writeFileSync(path.join(home, '.npmrc'), [`prefix=${path.join(home, '.local')}`, 'update-notifier=false', 'fund=false', 'audit=false', ...machine].join('\n') + '\n');
  copyCheckout(repo);
  api = createServer((request, response) => {
    request.resume();
    response.writeHead(401, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  for (const name of Object.values(NAMES)) {
    await login(`kernel-runner uninstall ${name}; kernel-runner rm ${name} --data`, { timeoutMs: 120_000 }).catch(() => undefined);
    await removeEngineResources(name);
  }
  await new Promise((resolve) => api?.close(resolve));
  await rm(home, { recursive: true, force: true });
  await rm(repo, { recursive: true, force: true });
}, 300_000);

describeWithEngine("README.md, followed verbatim in new login shells", () => {
  it('every command of the Quickstart and of kernel-runner runs and prints what the README says', { timeout: 1_200_000 }, async () => {
    const readme = readFileSync(path.join(repo, 'README.md'), 'utf8');
    const runner = readFileSync(path.join(repo, 'docs', 'runner.md'), 'utf8');
    const commands = [...sectionCommands(readme, '## Quickstart'), ...sectionCommands(`\n\n${runner}`, '# kernel-runner: an agent that lives for weeks')];
    expect(commands[0]).toBe('npm run setup');
    let doctors = 0;
    const seen: string[] = [];
    for (const line of commands) {
      const command = named(line);
      seen.push(command);
      const show = (ran: Ran) => `$ ${command}\nexit ${ran.code}\n${ran.stdout}${ran.stderr}`;
      if (command === 'claude') {
        expect(await atTerminal(command, /Welcome to Claude Code v2\.1\.197/)).toContain('Welcome to Claude Code');
        continue;
      }
      if (command === 'claude setup-token') {
        expect(await atTerminal(command, /Paste code here/)).toContain('oauth/authorize');
        continue;
      }
      if (/^kernel-runner watch /.test(command)) {
        const ran = await runWatch(command);
        expect(ran.code, show(ran)).toBe(0);
        expect(ran.stderr, show(ran)).toContain(`kernel-runner watch: watching ${NAMES.scout}`);
        continue;
      }
      const secret = /^kernel-runner secret set /.test(command);
      const ran = await login(command, { timeoutMs: 600_000, ...(secret ? { input: `${TOKEN}\n` } : {}) });
      const output = `${ran.stdout}${ran.stderr}`;
      expect(output, show(ran)).not.toMatch(/command not found|ENOENT/);
      if (command === 'npm run setup') {
        expect(ran.code, show(ran)).toBe(0);
        expect(ran.stderr, show(ran)).toMatch(/^setup: commands agent-kernel, kernel-runner and claude \(.*, 2\.1\.197 \(Claude Code\)\) are in /m);
        // One line a step and doctor's table: not apt's or the build's output.
        expect(ran.stderr.split('\n').length, show(ran)).toBeLessThan(60);
        expect(output).not.toContain('\\u000d');
        const which = await login('command -v agent-kernel kernel-runner claude');
        expect(which.stdout.trim().split('\n')).toEqual(['agent-kernel', 'kernel-runner', 'claude'].map((bin) => path.join(home, '.local', 'bin', bin)));
      } else if (/^agent-kernel doctor /.test(command)) {
        doctors++;
        const row = ran.stdout.split('\n').find((l) => /^ {2}\S+\s+claude login /.test(l)) ?? '';
        if (doctors === 1) {
          // Before credentials: exit 3 on that row, with the fix; every other row ok.
          expect(ran.code, show(ran)).toBe(3);
          expect(row, show(ran)).toMatch(/^ {2}MISSING\s+claude login\s+Claude Code is logged out/);
          expect(ran.stdout).toContain(`kernel-runner secret set ${NAMES.demo} CLAUDE_CODE_OAUTH_TOKEN`);
          expect(ran.stdout.split('\n').filter((l) => /^ {2}(FAIL|MISSING|PAUSED) /.test(l)), show(ran)).toHaveLength(1);
        } else {
          expect(ran.code, show(ran)).toBe(0);
          expect(row, show(ran)).toMatch(/^ {2}ok\s+claude login\s+logged in with CLAUDE_CODE_OAUTH_TOKEN from the secrets directory/);
        }
      } else if (command.startsWith('claude mcp list')) {
        expect(ran.code, show(ran)).toBe(0);
        expect(ran.stdout, show(ran)).toContain(`agent-kernel: agent-kernel serve ${NAMES.demo} - ✔ Connected`);
        // Added for the user, not the folder it ran in: another folder has it too.
        const elsewhere = await login(`cd / && ${command}`);
        expect(elsewhere.stdout, show(elsewhere)).toContain(`agent-kernel: agent-kernel serve ${NAMES.demo} - ✔ Connected`);
      } else if (/^kernel-runner tick /.test(command)) {
        // The API refuses the token: the first failed tick pauses and names the commands that fix it.
        const name = command.split(' ')[2]!;
        expect(ran.code, show(ran)).toBe(3);
        expect(ran.stdout, show(ran)).toContain(`${name} tick 1: failed (fatal)`);
        expect(ran.stdout, show(ran)).toContain(`${name} is paused: no tick runs until it is resumed. To fix it:\n  claude setup-token`);
        expect(ran.stdout, show(ran)).toContain(`  kernel-runner resume ${name}\n`);
      } else {
        expect(ran.code, show(ran)).toBe(0);
        if (secret) expect(ran.stdout, show(ran)).toContain('Saved CLAUDE_CODE_OAUTH_TOKEN');
      }
    }
    // What the README promises is all there, in this order.
    for (const expected of ['npm run setup', `claude mcp add --scope user agent-kernel -- agent-kernel serve ${NAMES.demo}`, `kernel-runner tick ${NAMES.demo}`, `kernel-runner init ${NAMES.scout} ~/${NAMES.scout}`, `kernel-runner watch ${NAMES.scout}`, 'kernel-runner status']) {
      expect(seen).toContain(expected);
    }
    expect(doctors).toBeGreaterThanOrEqual(2);
  });
});
