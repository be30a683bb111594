import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, registerSecrets, ttyLogger } from '../../../src/log/logger.js';
import { RotatingLogFiles } from '../../../src/log/rotating-files.js';
import { SecretRedactor } from '../../../src/log/secrets.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ak-log-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('createLogger', () => {
  it('writes JSON lines to one file per process, <process>.log, with child loggers per TTY', async () => {
    const logger = createLogger({ process: 'server', logDir: dir, stderr: false });
    logger.info({ tick: 3 }, 'hello');
    ttyLogger(logger, 4).warn('tty line');
    createLogger({ process: 'tick', logDir: dir, stderr: false }).info('tick line');
    // One file per process: a person never finds two files with the same lines.
    expect((await readdir(dir)).sort()).toEqual(['server.log', 'tick.log']);
    const lines = (await readFile(path.join(dir, 'server.log'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ name: 'server', msg: 'hello', tick: 3 });
    expect(lines[1]).toMatchObject({ msg: 'tty line', tty: 4 });
  });

  it('replaces registered secret values and token-like keys by [REDACTED] in every line', async () => {
    const logger = createLogger({ process: 'runner', logDir: dir, stderr: false });
    registerSecrets(logger, ['sk-ant-secret-123456', 'quote"d\\secret']);
    logger.info({ env: { ANTHROPIC_API_KEY: 'whatever-value' }, token: 'tok-1234567', headers: { authorization: 'Bearer x' } }, 'key is sk-ant-secret-123456 here');
    logger.error({ err: new Error('failed with quote"d\\secret inside') }, 'boom');
    const text = await readFile(path.join(dir, 'runner.log'), 'utf8');
    expect(text).not.toContain('sk-ant-secret-123456');
    expect(text).not.toContain('whatever-value');
    expect(text).not.toContain('tok-1234567');
    expect(text).not.toContain('Bearer x');
    expect(text).not.toContain('quote\\"d\\\\secret');
    expect(text.match(/\[REDACTED\]/g)?.length).toBeGreaterThanOrEqual(5);
  });

  it('refuses a secret too short to redact, without quoting it', () => {
    const logger = createLogger({ process: 'runner', logDir: dir, stderr: false });
    expect(() => registerSecrets(logger, ['q7#Zk'])).toThrow(/shorter than 6 characters/);
    expect(() => registerSecrets(logger, ['q7#Zk'])).not.toThrow(/q7#Zk/);
  });

  it('redacts only in the logger the secrets were given to: no process-wide state', async () => {
    const one = createLogger({ process: 'one', logDir: dir, stderr: false });
    const two = createLogger({ process: 'two', logDir: dir, stderr: false });
    registerSecrets(one, ['only-for-one-123']);
    one.child({ tty: 1 }).info('child line only-for-one-123');
    two.info('other line only-for-one-123');
    expect(await readFile(path.join(dir, 'one.log'), 'utf8')).not.toContain('only-for-one-123');
    expect(await readFile(path.join(dir, 'two.log'), 'utf8')).toContain('only-for-one-123');
  });

  it('redacts the longest secret first', () => {
    const secrets = new SecretRedactor();
    secrets.add(['secret-one', 'secret-one-longer']);
    expect(secrets.redact('a secret-one-longer b secret-one')).toBe('a [REDACTED] b [REDACTED]');
  });
});

describe('RotatingLogFiles', () => {
  it('starts a new daily file at midnight UTC and keeps 14 days of dated files', async () => {
    let now = new Date('2026-03-01T23:59:00Z');
    for (let day = 1; day <= 20; day++) await writeFile(path.join(dir, `p.log.2026-02-${String(day).padStart(2, '0')}`), 'old\n');
    const files = new RotatingLogFiles({ dir, process: 'p', now: () => now });
    files.write('before midnight\n');
    now = new Date('2026-03-02T00:00:01Z');
    files.write('after midnight\n');
    files.close();
    expect(await readFile(path.join(dir, 'p.log.2026-03-01'), 'utf8')).toBe('before midnight\n');
    expect(await readFile(path.join(dir, 'p.log'), 'utf8')).toBe('after midnight\n');
    const dated = (await readdir(dir)).filter((n) => n.startsWith('p.log.')).sort();
    // 14 days before 2026-03-02 is 2026-02-16: older files are gone.
    expect(dated[0]).toBe('p.log.2026-02-16');
    expect(dated).toContain('p.log.2026-03-01');
  });

  it('moves a daily file left by an earlier day aside on start', async () => {
    const file = path.join(dir, 'p.log');
    await writeFile(file, 'yesterday\n');
    await utimes(file, new Date('2026-03-01T12:00:00Z'), new Date('2026-03-01T12:00:00Z'));
    const files = new RotatingLogFiles({ dir, process: 'p', now: () => new Date('2026-03-02T08:00:00Z') });
    files.write('today\n');
    files.close();
    expect(await readFile(path.join(dir, 'p.log.2026-03-01'), 'utf8')).toBe('yesterday\n');
    expect(await readFile(file, 'utf8')).toBe('today\n');
  });

  it('never lets the file grow past its cap, keeping the latest lines in at most maxBackups dated files', async () => {
    const files = new RotatingLogFiles({ dir, process: 'p', maxBytes: 1000, maxBackups: 3, now: () => new Date('2026-03-01T12:00:00Z') });
    // 65 lines of 100 bytes: six full files rotated, the three oldest removed.
    for (let i = 0; i < 65; i++) files.write(`${String(i).padStart(3, '0')}${'x'.repeat(96)}\n`);
    files.close();
    const names = (await readdir(dir)).sort();
    expect(names).toEqual(['p.log', 'p.log.2026-03-01.3', 'p.log.2026-03-01.4', 'p.log.2026-03-01.5']);
    const sizes = await Promise.all(names.map(async (n) => (await readFile(path.join(dir, n), 'utf8')).length));
    expect(sizes).toEqual([500, 1000, 1000, 1000]);
    const kept = (await Promise.all(['p.log.2026-03-01.3', 'p.log.2026-03-01.4', 'p.log.2026-03-01.5', 'p.log'].map((n) => readFile(path.join(dir, n), 'utf8'))))
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => Number(l.slice(0, 3)));
    expect(kept).toEqual(Array.from({ length: 35 }, (_, k) => 30 + k));
  });

  it('removes the size-capped copy earlier versions kept beside the file', async () => {
    await writeFile(path.join(dir, 'p-current.log'), 'same\n');
    await writeFile(path.join(dir, 'p-current.log.1'), 'same\n');
    const files = new RotatingLogFiles({ dir, process: 'p' });
    files.write('new\n');
    files.close();
    expect(await readdir(dir)).toEqual(['p.log']);
  });
});

describe('RotatingLogFiles shared by several processes', () => {
  const writer = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'log', 'log-writer.mjs');
  const run = (id: string, lines: number, switchAt: number) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [writer, dir, id, String(lines), '3000', String(switchAt)], { stdio: 'inherit' });
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`log-writer ${id} exited ${code}`))));
    });
  const linesIn = async (names: string[]) =>
    (await Promise.all(names.map((n) => readFile(path.join(dir, n), 'utf8'))))
      .join('')
      .split('\n')
      .filter((l) => l)
      .map((l) => JSON.parse(l) as { p: string; n: number });

  it('loses no line and writes none to a removed file while they rotate by size and by day, in one file per process', async () => {
    const writers = 5;
    const lines = 400;
    await Promise.all(Array.from({ length: writers }, (_, i) => run(`w${i}`, lines, 80 * (i + 1))));
    const names = await readdir(dir);

    expect(names.filter((n) => !n.startsWith('server.log'))).toEqual([]);
    expect(names.filter((n) => n.startsWith('server.log.')).length).toBeGreaterThan(writers);
    // The file and its dated files: every line of every writer, exactly once.
    const all = await linesIn(names);
    for (let i = 0; i < writers; i++) {
      const mine = all.filter((l) => l.p === `w${i}`).map((l) => l.n).sort((a, b) => a - b);
      expect(mine).toEqual(Array.from({ length: lines }, (_, n) => n));
    }
  });
});
