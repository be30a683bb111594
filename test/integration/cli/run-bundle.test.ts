import { execFile } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt } from '../server/helpers.js';

const run = promisify(execFile);

/** A package of its own: dist/cli/t.js (the bin) runs dist/bundle/t.cjs through run-bundle.js. */
function fakePackage(): { root: string; bin: string; bundleDir: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'ak-run-bundle-'));
  const bundleDir = path.join(root, 'dist', 'bundle');
  mkdirSync(bundleDir, { recursive: true });
  mkdirSync(path.join(root, 'dist', 'cli'));
  // Enough functions that V8's cache of them is not trivially small.
  const functions = Array.from({ length: 200 }, (_, i) => `function f${i}(x) { return x * ${i} + ${i}; }`).join('\n');
  const sum = Array.from({ length: 200 }, (_, i) => `f${i}(1)`).join(' + ');
  // LONG=1: a run that outlives the cache's timer and compiles 400 functions more.
  const more = Array.from({ length: 400 }, (_, i) => `function g${i}(x) { return [x, ${i}].join('-'); }`).join('\n');
  const long = `if (process.env.LONG) { ${Array.from({ length: 400 }, (_, i) => `g${i}(1);`).join(' ')} setTimeout(() => {}, 6500); }`;
  writeFileSync(path.join(bundleDir, 't.cjs'), `${functions}\n${more}\nprocess.stdout.write('ran ' + require('node:path').basename(__filename) + ' ' + (${sum}));\n${long}\n`);
  const bin = path.join(root, 'dist', 'cli', 't.mjs');
  const runBundle = pathToFileURL(path.join(ROOT, 'dist', 'cli', 'run-bundle.js')).href;
  writeFileSync(bin, `import { runBundle } from ${JSON.stringify(runBundle)};\nrunBundle('t', import.meta.url);\n`);
  return { root, bin, bundleDir };
}

const EXPECTED = `ran t.cjs ${Array.from({ length: 200 }, (_, i) => 2 * i).reduce((a, b) => a + b, 0)}`;

describe('a bin run from its bundle with V8 code cache', () => {
  let pkg: ReturnType<typeof fakePackage>;
  const caches = () => readdirSync(pkg.bundleDir).filter((n) => n.startsWith('t.cjs.serve.'));
  const cacheFile = () => path.join(pkg.bundleDir, caches()[0]!);
  const serve = async (env: Record<string, string> = {}) => (await run(process.execPath, [pkg.bin, 'serve'], { timeout: 60_000, env: { ...process.env, ...env } })).stdout;

  beforeAll(async () => {
    await ensureBuilt();
    pkg = fakePackage();
  });
  afterAll(() => {
    if (pkg) rmSync(pkg.root, { recursive: true, force: true });
  });

  it('writes the cache beside the bundle on the first run, per command, and uses it unchanged after', async () => {
    expect(await serve()).toBe(EXPECTED);
    expect(caches()).toHaveLength(1);
    expect(caches()[0]).toMatch(/\.v8cache$/);
    const first = statSync(cacheFile());
    expect(first.isFile() && (first.mode & 0o777) === 0o644).toBe(true);
    expect(await serve()).toBe(EXPECTED);
    const second = statSync(cacheFile());
    // Accepted, so not written again: same file, same time.
    expect([second.ino, second.mtimeMs]).toEqual([first.ino, first.mtimeMs]);
    expect(readdirSync(pkg.bundleDir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('replaces a cache written by a short run with that of a run that lived longer and compiled more', async () => {
    const short = statSync(cacheFile());
    expect(await serve({ LONG: '1' })).toBe(EXPECTED);
    const long = statSync(cacheFile());
    expect(long.ino).not.toBe(short.ino);
    expect(long.size).toBeGreaterThan(short.size);
    // Accepted and no bigger than what this run compiles: left alone.
    expect(await serve({ LONG: '1' })).toBe(EXPECTED);
    expect(statSync(cacheFile()).ino).toBe(long.ino);
  });

  it('runs the same from a cache V8 refuses (garbage), and replaces it', async () => {
    const file = cacheFile();
    const garbage = Buffer.alloc(4096, 0x41);
    writeFileSync(file, garbage);
    expect(await serve()).toBe(EXPECTED);
    expect(readFileSync(file).equals(garbage)).toBe(false);
  });

  it('never reads a cache through a link, nor one that others may write: it compiles and puts its own file there', async () => {
    const file = cacheFile();
    const valid = readFileSync(file);
    const elsewhere = path.join(pkg.root, 'planted.v8cache');
    writeFileSync(elsewhere, valid);
    rmSync(file);
    symlinkSync(elsewhere, file);
    expect(await serve()).toBe(EXPECTED);
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
    expect(readFileSync(elsewhere).equals(valid)).toBe(true);

    chmodSync(file, 0o666);
    const writable = statSync(file);
    expect(await serve()).toBe(EXPECTED);
    const after = statSync(file);
    expect(after.ino).not.toBe(writable.ino);
    expect(after.mode & 0o777).toBe(0o644);
  });
});

describe('the shipped bundle', () => {
  it('leaves gRPC, protobuf and ssh2 out (loaded from node_modules on first use), and what it requires that way resolves', async () => {
    await ensureBuilt();
    const bundle = path.join(ROOT, 'dist', 'bundle', 'agent-kernel.cjs');
    const modules = readFileSync(bundle, 'utf8').match(/^\/\/ node_modules\/\S+$/gm) ?? [];
    expect(modules.length).toBeGreaterThan(100);
    expect(modules.filter((m) => /node_modules\/(@grpc|protobufjs|ssh2|cpu-features)\//.test(m))).toEqual([]);
    const { createRequire } = await import('node:module');
    const requireFromBundle = createRequire(bundle);
    for (const lazy of ['dockerode/lib/session.js', 'docker-modem/lib/ssh.js', 'dockerode/lib/buildkit.js']) expect(() => requireFromBundle.resolve(lazy)).not.toThrow();
  });
});
