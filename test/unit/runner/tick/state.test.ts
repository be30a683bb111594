import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dataPaths } from '../../../../src/config/paths.js';
import { isCodedError } from '../../../../src/errors.js';
import { acquireTickLock } from '../../../../src/runner/tick/lock.js';
import { assertNotPaused, readPaused, removePaused, writePaused } from '../../../../src/runner/tick/paused.js';
import { beginTickRecord, finishTickRecord, loadState } from '../../../../src/state/runner-state.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ak-state-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('state.json', () => {
  it('numbers ticks from 1 and records the running tick before it starts', async () => {
    const first = await beginTickRecord(path.join(dir, 'state.json'), { started: '2026-01-01T00:00:00.000Z', pid: 42 });
    expect(first.tick).toBe(1);
    const onDisk = JSON.parse(await readFile(path.join(dir, 'state.json'), 'utf8'));
    expect(onDisk).toMatchObject({ tick: 1, current: { tick: 1, status: 'running', pid: 42 } });
    await finishTickRecord(path.join(dir, 'state.json'), { ...first, status: 'ok', duration_ms: 1000, cost_usd: 0.1 });
    const second = await beginTickRecord(path.join(dir, 'state.json'), { started: '2026-01-01T01:00:00.000Z' });
    expect(second.tick).toBe(2);
    const state = await loadState(path.join(dir, 'state.json'));
    expect(state.last).toMatchObject({ tick: 1, status: 'ok', duration_ms: 1000, cost_usd: 0.1 });
    expect(state.last).not.toHaveProperty('pid');
    expect(state.history.map((t) => t.tick)).toEqual([1]);
  });

  it('refuses a state.json that is not JSON, naming the file', async () => {
    await writeFile(path.join(dir, 'state.json'), '{');
    await expect(loadState(path.join(dir, 'state.json'))).rejects.toThrow(/state\.json: is not valid JSON/);
  });
});

describe('tick lock', () => {
  it('refuses a second tick, naming the PID that runs the first', async () => {
    const file = path.join(dir, 'tick.lock');
    const lock = await acquireTickLock(file, 'scout');
    await lock.update({ tick: 7 });
    const second = await acquireTickLock(file, 'scout').catch((e: unknown) => e);
    expect(isCodedError(second, 'TICK_RUNNING')).toBe(true);
    expect((second as Error).message).toContain(`tick 7 (PID ${process.pid}`);
    await lock.release();
    const third = await acquireTickLock(file, 'scout');
    await third.release();
  });

  it('takes over a lock whose process is gone', async () => {
    const file = path.join(dir, 'tick.lock');
    const child = spawn(process.execPath, ['-e', '0']);
    const deadPid = child.pid as number;
    await new Promise((resolve) => child.once('exit', resolve));
    await writeFile(file, JSON.stringify({ pid: deadPid, started: 'then', tick: 3 }));
    const lock = await acquireTickLock(file, 'scout');
    expect(JSON.parse(await readFile(file, 'utf8')).pid).toBe(process.pid);
    await lock.release();
  });

  it('refuses while another live process holds it', async () => {
    const file = path.join(dir, 'tick.lock');
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      await writeFile(file, JSON.stringify({ pid: child.pid, started: 'now' }));
      await expect(acquireTickLock(file, 'scout')).rejects.toThrow(`already running a tick (PID ${child.pid}`);
    } finally {
      child.kill();
    }
  });
});

describe('paused', () => {
  it('pauses with a reason and refuses ticks until resume: removing the agent\'s view lifts nothing', async () => {
    const paths = { ...dataPaths(dir), pauseRecord: path.join(dir, 'state', 'paused') };
    await assertNotPaused(paths, 'scout');
    await writePaused(paths, 'Not logged in · Please run /login', 4);
    expect(await readPaused(paths)).toMatch(/^Not logged in/);
    expect(await readFile(paths.paused, 'utf8')).toMatch(/^Not logged in/);
    const error = await assertNotPaused(paths, 'scout').catch((e: unknown) => e);
    expect(isCodedError(error, 'INSTANCE_PAUSED')).toBe(true);
    expect((error as Error).message).toBe(`Instance "scout" is paused: Not logged in · Please run /login. Fix the cause (agent-kernel doctor scout shows how), then: kernel-runner resume scout`);
    await rm(paths.paused);
    expect(await readPaused(paths)).toMatch(/^Not logged in/);
    await removePaused(paths);
    await assertNotPaused(paths, 'scout');
  });

  it('takes a pause the agent writes itself (it may pause itself), until it or resume removes it', async () => {
    const paths = { ...dataPaths(dir), pauseRecord: path.join(dir, 'state', 'paused') };
    await mkdir(paths.system, { recursive: true });
    await writeFile(paths.paused, 'taking a break\n');
    expect(await readPaused(paths)).toBe('taking a break');
    await removePaused(paths);
    expect(await readPaused(paths)).toBeUndefined();
  });
});

describe('a runner that died mid-tick', () => {
  it('is recorded as a failed tick when the next one begins', async () => {
    await beginTickRecord(path.join(dir, 'state.json'), { started: '2026-01-01T00:00:00.000Z', pid: 999_999 });
    const next = await beginTickRecord(path.join(dir, 'state.json'), { started: '2026-01-01T01:00:00.000Z', pid: 1 });
    expect(next.tick).toBe(2);
    const state = await loadState(path.join(dir, 'state.json'));
    expect(state.last).toMatchObject({ tick: 1, status: 'failed', error: expect.stringContaining('PID 999999') });
    expect(state.current).toMatchObject({ tick: 2, status: 'running' });
  });
});
