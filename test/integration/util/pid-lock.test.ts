import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquirePidLock, readLockHolder } from '../../../src/util/process/pid-lock.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const TAKER = path.join(ROOT, 'test', 'fixtures', 'util', 'lock-taker.mjs');

interface TakerResult {
  taken: number;
  overlaps: number;
  errors: string[];
}

function runTaker(lockFile: string, markerFile: string, rounds: number): Promise<TakerResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TAKER, lockFile, markerFile, String(rounds)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`lock-taker exited ${code}`));
      else resolve(JSON.parse(out) as TakerResult);
    });
  });
}

describe('PID lock', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pid-lock-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is never held by two processes at once while several race to take, update and release it', async () => {
    const lockFile = path.join(dir, 'the.lock');
    const marker = path.join(dir, 'held');
    const results = await Promise.all(Array.from({ length: 6 }, () => runTaker(lockFile, marker, 300)));
    const taken = results.reduce((sum, r) => sum + r.taken, 0);
    expect(results.flatMap((r) => r.errors)).toEqual([]);
    expect(taken).toBeGreaterThan(0);
    expect(results.reduce((sum, r) => sum + r.overlaps, 0)).toBe(0);
  });

  it('a lock left by a dead process is taken over, and only by one of the racing takers', async () => {
    const lockFile = path.join(dir, 'the.lock');
    for (let trial = 0; trial < 12; trial++) {
      // PID 2^22+1 is above Linux's pid_max ceiling: never alive.
      await writeFile(lockFile, JSON.stringify({ pid: 4_194_305, started: new Date().toISOString() }) + '\n');
      const marker = path.join(dir, `held-${trial}`);
      const results = await Promise.all(Array.from({ length: 4 }, () => runTaker(lockFile, marker, 1)));
      expect(results.flatMap((r) => r.errors)).toEqual([]);
      expect(results.reduce((sum, r) => sum + r.overlaps, 0)).toBe(0);
      expect(results.reduce((sum, r) => sum + r.taken, 0)).toBeGreaterThanOrEqual(1);
    }
  });

  it('a reader never sees a lock file without its holder, even mid-update', async () => {
    const lockFile = path.join(dir, 'the.lock');
    const lock = await acquirePidLock(lockFile, () => new Error('refused'));
    let torn = 0;
    const reading = (async () => {
      for (let i = 0; i < 2000; i++) if ((await readLockHolder(lockFile))?.pid !== process.pid) torn++;
    })();
    for (let i = 0; i < 300; i++) await lock.update({ tick: i, note: 'x'.repeat(i) });
    await reading;
    await lock.release();
    expect(torn).toBe(0);
    await expect(readFile(lockFile)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a live holder in this process refuses a second taker, naming the holder', async () => {
    const lockFile = path.join(dir, 'the.lock');
    const lock = await acquirePidLock(lockFile, () => new Error('refused'));
    await expect(acquirePidLock(lockFile, (holder) => new Error(`held by ${holder.pid}`))).rejects.toThrow(`held by ${process.pid}`);
    await lock.release();
  });

  it('takers in this process that start at the same moment: exactly one holds it at a time, round after round', async () => {
    const lockFile = path.join(dir, 'the.lock');
    for (let round = 0; round < 50; round++) {
      const tries = await Promise.allSettled(Array.from({ length: 5 }, () => acquirePidLock(lockFile, () => new Error('refused'))));
      const held = tries.filter((t) => t.status === 'fulfilled');
      expect(held, `round ${round}`).toHaveLength(1);
      expect((await readLockHolder(lockFile))?.pid).toBe(process.pid);
      await held[0]!.value.release();
      expect(await readLockHolder(lockFile)).toBeUndefined();
    }
  });

  it('takes over a lock file whose holder is not a PID it can check (never signals or trusts it)', async () => {
    const lockFile = path.join(dir, 'the.lock');
    // 1 is init, always alive: a lock naming it as a string, or a negative or fractional PID, is no holder.
    for (const text of ['{"pid":"1","started":"x"}', '{"pid":-1,"started":"x"}', '{"pid":1.5,"started":"x"}', '{"pid":1}', '[1]']) {
      await writeFile(lockFile, text);
      expect(await readLockHolder(lockFile)).toBeUndefined();
      const lock = await acquirePidLock(lockFile, (holder) => new Error(`held by ${holder.pid}`));
      expect((await readLockHolder(lockFile))?.pid).toBe(process.pid);
      await lock.release();
    }
  });
});
