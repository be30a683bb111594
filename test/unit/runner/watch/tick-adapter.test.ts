import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAgentConfig } from '../../../../src/config/agent-config.js';
import type { TickOutcome } from '../../../../src/runner/tick/tick.js';
import { detectInterruptedTick, watchResultOf } from '../../../../src/runner/watch/tick-adapter.js';
import { unitPaths } from '../../../helpers/test-instance.js';

const base: TickOutcome = {
  tick: 3,
  status: 'ok',
  paused: false,
  durationMs: 1,
  attempts: 1,
  tokens: { input: 0, output: 0, cache_creation: 0, cache_read: 0, context_used: 0, context_window: 0 },
  costUsd: 0,
  lastMessage: '',
  logFile: '/x',
};

describe('watchResultOf', () => {
  it.each([
    [{ status: 'ok' }, false, 'ok'],
    [{ status: 'failed', errorClass: 'harness', error: 'exit 1' }, true, 'failed (harness)'],
    [{ status: 'failed', errorClass: 'fatal', paused: true }, true, 'failed (fatal)'],
    [{ status: 'failed', errorClass: 'mcp' }, true, 'failed (mcp)'],
    [{ status: 'interrupted', errorClass: 'timeout' }, true, 'interrupted (timeout)'],
    [{ status: 'interrupted', errorClass: 'idle' }, true, 'interrupted (idle)'],
    [{ status: 'interrupted', errorClass: 'context' }, false, 'interrupted (context)'],
    [{ status: 'interrupted', errorClass: 'limit' }, false, 'interrupted (limit)'],
    [{ status: 'interrupted', errorClass: 'aborted' }, false, 'interrupted (aborted)'],
  ] as const)('%j → failed=%s', (fields, failed, status) => {
    const result = watchResultOf({ ...base, ...fields } as TickOutcome);
    expect(result).toMatchObject({ failed, status, tick: 3 });
  });

  it('carries a usage limit reset', () => {
    expect(watchResultOf({ ...base, status: 'failed', errorClass: 'rate_limit', retryAfterMs: 5000 }).retryAfterMs).toBe(5000);
  });
});

describe('detectInterruptedTick', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'interrupted-'));
    await mkdir(path.join(dir, 'system'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(`${dir}.state`, { recursive: true, force: true });
  });
  const instance = () => ({ name: 'a', dataDir: dir, paths: unitPaths('a', dir), config: parseAgentConfig({}) });
  const state = async (s: unknown) => {
    await mkdir(path.dirname(unitPaths('a', dir).state), { recursive: true });
    await writeFile(unitPaths('a', dir).state, JSON.stringify(s));
  };
  // A PID that is surely not running: past the kernel's default pid_max.
  const deadPid = 4_194_304 + 7;

  it('finds nothing without state.json, or after a normal tick', async () => {
    expect(await detectInterruptedTick(instance())).toBeUndefined();
    await state({ tick: 2, current: null, last: { tick: 2, started: 'x', status: 'ok' } });
    expect(await detectInterruptedTick(instance())).toBeUndefined();
  });

  it('a running tick whose runner is gone: died mid-tick', async () => {
    await state({ tick: 5, current: { tick: 5, started: '2026-11-22T08:00:00Z', status: 'running', pid: deadPid } });
    expect(await detectInterruptedTick(instance())).toEqual({
      notice: `Notice: the runner died during tick 5 (started 2026-11-22T08:00:00Z, PID ${deadPid}); that tick never finished. Check what it left unfinished.`,
      diedMidTick: true,
    });
  });

  it('a running tick whose runner is alive (a manual tick): nothing', async () => {
    await state({ tick: 5, current: { tick: 5, started: 'x', status: 'running', pid: process.ppid } });
    expect(await detectInterruptedTick(instance())).toBeUndefined();
  });

  it.each([
    [{ status: 'failed', error_class: 'harness', error: 'exit 1' }, 'Notice: tick 4 ended abnormally (harness: exit 1). Check what it left unfinished.'],
    [{ status: 'interrupted', error_class: 'timeout' }, 'Notice: tick 4 ended abnormally (timeout). Check what it left unfinished.'],
  ])('a last tick that ended abnormally: a notice, no restart (%j)', async (fields, notice) => {
    await state({ tick: 4, current: null, last: { tick: 4, started: 'x', ...fields } });
    expect(await detectInterruptedTick(instance())).toEqual({ notice, diedMidTick: false });
  });

  it('an operator stop (aborted) is not a crash', async () => {
    await state({ tick: 4, current: null, last: { tick: 4, started: 'x', status: 'interrupted', error_class: 'aborted' } });
    expect(await detectInterruptedTick(instance())).toBeUndefined();
  });
});
