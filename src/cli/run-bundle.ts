import fs from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

/** A cache file bigger than this is not ours. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;
/** When the cache is written on a long run: start-up's functions have been compiled by then. */
const WRITE_CACHE_AFTER_MS = 5000;

/**
 * V8's code cache of a bundle for one command (`serve` compiles other functions than `ls`),
 * next to the bundle: it is code the host runs, so it lives where the code itself does, never
 * in an instance's data directory (the container writes there). Named by the bundle's size
 * and time, so that a rebuilt bundle never meets an old cache (V8 itself checks only the
 * source's length), and by V8's version.
 */
function cacheFileOf(bundle: fs.Stats, file: string, command: string | undefined): string {
  const which = command && /^[a-z][a-z-]{0,30}$/.test(command) ? command : 'other';
  return `${file}.${which}.${bundle.size}-${Math.trunc(bundle.mtimeMs)}.${process.versions.v8}.v8cache`;
}

/** The cache, if it is a regular file this user owns that nobody else may write; else nothing. */
function readCache(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    const stat = fs.fstatSync(fd);
    const ownedByUs = stat.uid === process.getuid?.() && (stat.mode & 0o022) === 0;
    if (!stat.isFile() || !ownedByUs || stat.size > MAX_CACHE_BYTES) return undefined;
    return fs.readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Write the cache beside the bundle, atomically; a read-only install simply goes without. */
function writeCache(data: Buffer, file: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temporary, data, { mode: 0o644, flag: 'wx' });
    fs.renameSync(temporary, file);
  } catch {
    fs.rmSync(temporary, { force: true });
  }
}

/**
 * Run a bundle (dist/bundle/<name>.cjs, built by scripts/bundle.mjs) as a CommonJS
 * module, compiled from V8's code cache when there is one; without one, the cache is written
 * once the command has run a while (or at its exit, if sooner), and a run that outlives the
 * one that wrote it and compiled more replaces it. Under `--enable-source-maps`
 * Node's own loader runs it: only that one maps stack traces to src/ (not a vm.Script).
 * Returns what the bundle exports.
 */
export function runBundle(name: string, importMetaUrl: string): unknown {
  const file = path.resolve(path.dirname(fileURLToPath(importMetaUrl)), '..', 'bundle', `${name}.cjs`);
  if (process.sourceMapsEnabled) return Module.createRequire(file)(file) as unknown;
  const source = fs.readFileSync(file, 'utf8');
  const cacheFile = cacheFileOf(fs.statSync(file), file, process.argv[2]);
  const cachedData = readCache(cacheFile);
  // No import() in the bundle (scripts/bundle.mjs turns it into require()), so no loader for one.
  const script = new vm.Script(Module.wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) });
  const used = cachedData !== undefined && !script.cachedDataRejected;
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    const data = script.createCachedData();
    // A cache from a short run (a server that could not start) lacks most of start-up: a longer run replaces it.
    if (!used || data.length > cachedData.length * 1.1) writeCache(data, cacheFile);
  };
  setTimeout(write, WRITE_CACHE_AFTER_MS).unref();
  if (!used) process.once('exit', write);
  const bundleModule = new Module(file);
  bundleModule.filename = file;
  const run = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;
  run.call(bundleModule.exports, bundleModule.exports, Module.createRequire(file), bundleModule, file, path.dirname(file));
  return bundleModule.exports;
}
