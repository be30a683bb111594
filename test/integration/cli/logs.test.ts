import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instancePaths } from '../../../src/config/paths.js';
import { readEvents } from '../../../src/observe/events/event-log.js';
import { pollUntil } from '../../helpers/poll.js';

/** Logs for people, from the built bin: `kernel-runner logs [-f] NAME` over an instance's log files. */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = path.join(ROOT, 'dist', 'cli', 'kernel-runner.js');
let root: string;
let env: NodeJS.ProcessEnv;
let follower: ChildProcess | undefined;

function run(...args: string[]) {
  const ran = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env });
  return { code: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

const record = (time: number, level: number, name: string, msg: string, extra: Record<string, unknown> = {}) => `${JSON.stringify({ level, time, pid: 1, hostname: 'h', name, msg, ...extra })}\n`;
const local = (time: number) => {
  const d = new Date(time);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ak-logs-'));
  env = { ...process.env, AGENT_KERNEL_CONFIG_DIR: path.join(root, 'config'), AGENT_KERNEL_STATE_DIR: path.join(root, 'state'), AGENT_KERNEL_LOG_FORMAT: 'json' };
  expect(run('init', 'wd', path.join(root, 'wd')).code).toBe(0);
});

afterAll(async () => {
  follower?.kill('SIGKILL');
  await rm(root, { recursive: true, force: true });
});

describe('kernel-runner logs', () => {
  it('prints every process log merged in time order, in local time with level, process, message and fields; -f follows', async () => {
    const logs = instancePaths('wd', path.join(root, 'wd'), env).logs;
    await mkdir(logs, { recursive: true });
    const t0 = Date.parse('2026-12-06T04:00:00Z');
    await writeFile(path.join(logs, 'watch-wd.log'), record(t0, 30, 'watch-wd', 'starting a tick (message)', { instance: 'wd', messages: 1 }) + record(t0 + 3000, 40, 'watch-wd', 'attempt 1 of 4 failed', { instance: 'wd', tick: 3, delayMs: 4000 }));
    await writeFile(path.join(logs, 'kernel.log'), record(t0 + 1000, 30, 'kernel', 'kernel ready', { pid: 42 }) + 'not json\n');
    // The copy earlier versions kept beside each file is not read: no line twice.
    await writeFile(path.join(logs, 'kernel-current.log'), record(t0 + 1000, 30, 'kernel', 'kernel ready', { pid: 42 }));
    const printed = run('logs', 'wd');
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout.split('\n').filter(Boolean)).toEqual([
      `${local(t0)} INFO  watch-wd wd: starting a tick (message) · messages=1`,
      `${local(t0 + 1000)} INFO  kernel kernel ready`,
      `${local(t0 + 3000)} WARN  watch-wd wd tick 3: attempt 1 of 4 failed · delay=4s`,
    ]);
    expect(run('logs', 'wd', '-n', '1').stdout).toBe(`${local(t0 + 3000)} WARN  watch-wd wd tick 3: attempt 1 of 4 failed · delay=4s\n`);

    let out = '';
    follower = spawn(process.execPath, [BIN, 'logs', '-f', 'wd', '-n', '1'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    follower.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    // Once it has printed the last line, it follows: a line written later, by another process, in pieces.
    await pollUntil(() => out.includes('attempt 1 of 4 failed'), 'logs -f to print the last line', { timeoutMs: 10_000 });
    const later = record(t0 + 9000, 50, 'tick', 'the tick failed', { err: { message: 'boom' } });
    await appendFile(path.join(logs, 'tick.log'), later.slice(0, 20));
    await appendFile(path.join(logs, 'tick.log'), later.slice(20));
    await pollUntil(() => out.includes('the tick failed'), 'logs -f to print the new line', { timeoutMs: 10_000 });
    expect(out).toBe(`${local(t0 + 3000)} WARN  watch-wd wd tick 3: attempt 1 of 4 failed · delay=4s\n${local(t0 + 9000)} ERROR tick   the tick failed · error="boom"\n`);
  });

  it('-n gives the last lines even just after a rotation: the dated files rotated out of a log give the rest', async () => {
    const logs = instancePaths('wd', path.join(root, 'wd'), env).logs;
    const t0 = Date.parse('2026-12-06T05:00:00Z');
    const lines = Array.from({ length: 30 }, (_, i) => record(t0 + i * 1000, 30, 'watch-rot', `line ${i}`));
    // As RotatingFiles leaves them: an older dated file, a later one of the same day, then the file it started.
    await writeFile(path.join(logs, 'watch-rot.log.2026-12-06'), lines.slice(0, 10).join(''));
    await writeFile(path.join(logs, 'watch-rot.log.2026-12-06.1'), lines.slice(10, 28).join(''));
    await writeFile(path.join(logs, 'watch-rot.log'), lines.slice(28).join(''));
    const printed = run('logs', 'wd', '-n', '25');
    expect(printed.code, printed.stderr).toBe(0);
    const ours = printed.stdout.split('\n').filter((l) => l.includes('watch-rot'));
    expect(ours.map((l) => /line \d+/.exec(l)?.[0])).toEqual(Array.from({ length: 25 }, (_, i) => `line ${i + 5}`));
  });

  it('agent-kernel logs points to it', () => {
    const ran = spawnSync(process.execPath, [path.join(ROOT, 'dist', 'cli', 'agent-kernel.js'), 'logs', 'wd'], { encoding: 'utf8', env });
    expect(ran.status).toBe(2);
    expect(ran.stderr).toContain('it is a command of kernel-runner. Run: kernel-runner logs');
  });

  it('resume records an instance.resumed event', async () => {
    const paths = instancePaths('wd', path.join(root, 'wd'), env);
    await writeFile(paths.paused, 'paused by hand for the test\n');
    expect(run('resume', 'wd', '--force').code).toBe(0);
    expect((await readEvents(paths.events)).events.find((e) => e.type === 'instance.resumed')).toMatchObject({ by: 'kernel-runner resume' });
  });
});
