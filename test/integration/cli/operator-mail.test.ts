import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryForecast } from '../../../src/cli/commands/kernel-runner/send.js';
import { instancePaths } from '../../../src/config/paths.js';
import { readEvents } from '../../../src/observe/events/event-log.js';
import { Recording } from '../../../src/observe/recording.js';

/** The operator's mail commands, run as a person runs them (the built bins), on an instance with no watch. */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
let root: string;
let env: NodeJS.ProcessEnv;

function run(bin: string, ...args: string[]) {
  const ran = spawnSync(process.execPath, [path.join(ROOT, 'dist', 'cli', `${bin}.js`), ...args], { encoding: 'utf8', env });
  return { code: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ak-opmail-'));
  env = { ...process.env, AGENT_KERNEL_CONFIG_DIR: path.join(root, 'config'), AGENT_KERNEL_STATE_DIR: path.join(root, 'state'), AGENT_KERNEL_LOG_FORMAT: 'pretty' };
  expect(run('kernel-runner', 'init', 'wd', path.join(root, 'wd')).code).toBe(0);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('kernel-runner mail withdraw', () => {
  it('takes a queued message back: out of the queue and the agent view, kept in the event log; a second withdraw says it is gone', async () => {
    const sent = run('kernel-runner', 'send', 'wd', 'deploy at noon');
    expect(sent.code).toBe(0);
    const id = /^(m-\S+): queued/.exec(sent.stdout)?.[1];
    expect(id, sent.stdout).toBeDefined();
    const paths = instancePaths('wd', path.join(root, 'wd'), env);
    expect(await readdir(paths.mail.queue)).toEqual([`${id}.json`]);

    const withdrawn = run('kernel-runner', 'mail', 'withdraw', 'wd', id!);
    expect(withdrawn, JSON.stringify(withdrawn)).toMatchObject({ code: 0, stdout: `${id}: withdrawn from wd's queue before its model had it (the event log keeps its text).\n` });
    expect(await readdir(paths.mail.queue)).toEqual([]);
    expect(await readdir(path.join(paths.mail.view, 'inbox'))).toEqual([]);
    // Kept, and listed as what it is: nothing the operator sent disappears from the record.
    const listed = run('kernel-runner', 'mail', 'wd').stdout;
    expect(listed).toContain(id);
    expect(listed).toContain('withdrawn by the operator');
    const { events } = await readEvents(paths.events);
    expect(events.find((e) => e.type === 'message.withdrawn')).toMatchObject({ id, from: 'operator', to: 'wd', text: 'deploy at noon' });

    const again = run('kernel-runner', 'mail', 'withdraw', 'wd', id!);
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(`kernel-runner mail: wd has no message ${id} waiting (kernel-runner mail wd lists its messages).\n`);
    expect(run('kernel-runner', 'mail', 'withdraw', 'wd', '../../etc/passwd').stderr).toContain('is not a message id');
  });
});

describe('kernel-runner send to a paused instance', () => {
  it('names the command that resumes it, not a file to remove', () => {
    const live = { watchPid: 42, state: 'paused', reason: 'Claude Code has no credentials' } as Parameters<typeof deliveryForecast>[1];
    for (const text of [deliveryForecast('wd', undefined, 'the model never ran'), deliveryForecast('wd', live, undefined)]) {
      expect(text).toContain('kernel-runner resume wd');
      expect(text).not.toContain('system/paused');
    }
  });
});

describe('agent-kernel play --list', () => {
  it("lists an instance's recordings, oldest first, with start, length and commands", async () => {
    const paths = instancePaths('wd', path.join(root, 'wd'), env);
    expect(run('agent-kernel', 'play', 'wd', '--list').stdout).toContain('No recordings yet');
    // Tick numbers and time disagree on purpose (a recording between ticks keeps the last tick's number): time orders.
    const start = Math.floor(Date.now() / 1000) - 600;
    for (const [file, command, startedAt] of [['tty_1-tick-002.cast', 'make test', start], ['tty_0-tick-001.cast', 'ls -la', start + 60]] as const) {
      const recording = new Recording(path.join(paths.recordings, file), { cols: 80, rows: 24, title: file, startedAt }, 1024 * 1024);
      recording.marker(`$ ${command}`);
      recording.output('done\r\n');
      await recording.close();
    }
    const listed = run('agent-kernel', 'play', 'wd', '--list');
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^RECORDING\s+STARTED\s+LENGTH\s+COMMANDS\s+FIRST COMMANDS$/);
    expect(lines[1]).toMatch(/^tty_1-tick-002\.cast\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+\d+s\s+1\s+make test$/);
    expect(lines[2]).toMatch(/^tty_0-tick-001\.cast\s.*ls -la$/);
  });
});
