import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadState, parseState } from '../../../src/state/runner-state.js';
import { readTerminalRegistry, writeTerminalRegistry } from '../../../src/state/terminal-registry.js';
import { parseTtyStatusFile, readTtyStatusFile, writeTtyStatusFile } from '../../../src/state/tty-status-file.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'shared-files-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const status = { tty: 2, command: 'bash', program: 'vim', alive: true, lastActivity: '2026-11-23T09:00:00Z', highWaterMark: 40, unseen: false, cols: 120, rows: 40, fullScreen: true };

describe('tty status file', () => {
  it.each([
    ['what the terminal files write', status, true],
    ['an exited terminal with its code', { ...status, alive: false, exitCode: 130 }, true],
    ['a field of the wrong type', { ...status, unseen: 'yes' }, false],
    ['a missing field', { tty: 2, command: 'bash' }, false],
    ['not an object', 'status', false],
  ])('%s: accepted=%s', (_what, input, ok) => {
    expect(parseTtyStatusFile(input) !== undefined).toBe(ok);
  });
});

describe('tty status file on disk', () => {
  it('reads what it writes; none when absent, torn or foreign', async () => {
    const tty = path.join(dir, 'tty_2');
    expect(await readTtyStatusFile(tty)).toBeUndefined();
    await writeTtyStatusFile(tty, status);
    expect(await readTtyStatusFile(tty)).toMatchObject({ tty: 2, program: 'vim', alive: true });
    await writeFile(path.join(tty, 'status'), '{"tty": 2, "comm');
    expect(await readTtyStatusFile(tty)).toBeUndefined();
    await writeFile(path.join(tty, 'status'), JSON.stringify({ ...status, alive: 'yes' }));
    expect(await readTtyStatusFile(tty)).toBeUndefined();
  });

  it('follows no link put in place of the file', async () => {
    const tty = path.join(dir, 'tty_3');
    await mkdir(tty);
    await writeFile(path.join(dir, 'elsewhere'), JSON.stringify(status));
    await symlink(path.join(dir, 'elsewhere'), path.join(tty, 'status'));
    expect(await readTtyStatusFile(tty)).toBeUndefined();
  });
});

describe('session registry', () => {
  const registry = { instance: 'a', sandbox: 'docker', updatedAt: 'now', tmuxSocket: 'agent-kernel', ttys: [{ tty: 0, command: 'bash', program: 'bash', alive: true, openedAt: 'then', dir: '/d/tty_0' }] };

  it('reads what the terminal manager writes; none when absent', async () => {
    await writeTerminalRegistry(path.join(dir, 'registry.json'), registry);
    expect((await readTerminalRegistry(path.join(dir, 'registry.json')))?.ttys.map((t) => t.tty)).toEqual([0]);
    expect(await readTerminalRegistry(path.join(dir, 'absent.json'))).toBeUndefined();
  });

  it.each([
    ['keyed by number', { ...registry, ttys: { 0: registry.ttys[0] } }],
    ['a terminal without its number', { ...registry, ttys: [{ command: 'bash' }] }],
  ])('refuses %s, naming the file', async (_what, content) => {
    await writeFile(path.join(dir, 'registry.json'), JSON.stringify(content));
    await expect(readTerminalRegistry(path.join(dir, 'registry.json'))).rejects.toThrow(/registry\.json is not a terminal registry/);
  });
});

describe('runner state', () => {
  it('defaults when there is no file, and keeps fields it does not know', async () => {
    expect(await loadState(path.join(dir, 'state.json'))).toMatchObject({ tick: 0, current: null, last: null, history: [] });
    expect(parseState({ tick: 4, extra: 'kept' })).toMatchObject({ tick: 4, extra: 'kept' });
  });

  it('names the bad field', () => {
    expect(() => parseState({ tick: 'four' }, 'system/state.json')).toThrow(/system\/state\.json: tick:/);
  });
});
