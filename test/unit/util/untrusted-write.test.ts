import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openUntrustedDir } from '../../../src/util/untrusted-dir.js';
import { kindOfUntrusted, readUntrustedRange, readUntrustedTail } from '../../../src/util/untrusted-fs.js';
import { makeUntrustedDirs, moveUntrusted, writeUntrustedAtomic, writeUntrustedNew } from '../../../src/util/untrusted-write.js';

// The agent plants links and FIFOs where the host writes, creates folders and moves files: the host folder must stay as it was.
let root: string;
let outside: string;
const CANARY = 'host-secret-canary-5d1e';

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ak-untrusted-w-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'ak-host-w-'));
  await writeFile(path.join(outside, 'secret'), CANARY);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

async function outsideUntouched(): Promise<void> {
  expect((await readdir(outside)).sort()).toEqual(['secret']);
  expect(await readFile(path.join(outside, 'secret'), 'utf8')).toBe(CANARY);
}

describe('openUntrustedDir', () => {
  it('creates missing folders, and refuses a link at every component without creating anything behind it', async () => {
    const dir = await openUntrustedDir(root, 'a/b/c', { create: true });
    await dir?.close();
    expect((await lstat(path.join(root, 'a/b/c'))).isDirectory()).toBe(true);
    for (const at of ['a', 'a/b', 'a/b/c']) {
      await rm(path.join(root, 'a'), { recursive: true, force: true });
      await mkdir(path.join(root, path.dirname(at)), { recursive: true });
      await symlink(outside, path.join(root, at));
      await expect(openUntrustedDir(root, 'a/b/c/d', { create: true }), at).rejects.toThrow(/symbolic link/);
      await expect(openUntrustedDir(root, 'a/b/c/d'), at).rejects.toThrow(/symbolic link/);
      await outsideUntouched();
    }
  });

  it('says undefined for a missing folder unless told to create it, and refuses a file on the way', async () => {
    expect(await openUntrustedDir(root, 'nothing/here')).toBeUndefined();
    await writeFile(path.join(root, 'file'), 'x');
    await expect(openUntrustedDir(root, 'file/below', { create: true })).rejects.toThrow(/non-directory/);
  });
});

describe('writeUntrustedNew', () => {
  it('creates a file with its folders, and never writes over what is there (file, link, FIFO)', async () => {
    expect(await writeUntrustedNew(root, 'system/hooks/pre-tick/README.md', 'hi')).toBe(true);
    expect(await readFile(path.join(root, 'system/hooks/pre-tick/README.md'), 'utf8')).toBe('hi');
    expect(await writeUntrustedNew(root, 'system/hooks/pre-tick/README.md', 'again')).toBe(false);
    await symlink(path.join(outside, 'secret'), path.join(root, 'link'));
    await symlink(path.join(outside, 'new'), path.join(root, 'dangling'));
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    expect(await writeUntrustedNew(root, 'link', 'x')).toBe(false);
    expect(await writeUntrustedNew(root, 'dangling', 'x')).toBe(false);
    expect(await writeUntrustedNew(root, 'fifo', 'x')).toBe(false);
    await outsideUntouched();
  });

  it('refuses a link on the way (system/hooks → a host folder)', async () => {
    await mkdir(path.join(root, 'system'));
    await symlink(outside, path.join(root, 'system', 'hooks'));
    await expect(writeUntrustedNew(root, 'system/hooks/pre-tick/README.md', 'x')).rejects.toThrow(/hooks.*symbolic link/);
    await outsideUntouched();
  });
});

describe('writeUntrustedAtomic', () => {
  it('replaces a planted link itself, never its target', async () => {
    await mkdir(path.join(root, 'system'));
    await symlink(path.join(outside, 'secret'), path.join(root, 'system', 'paused'));
    await writeUntrustedAtomic(root, 'system/paused', 'paused: reason');
    expect((await lstat(path.join(root, 'system', 'paused'))).isFile()).toBe(true);
    expect(await readFile(path.join(root, 'system', 'paused'), 'utf8')).toBe('paused: reason');
    expect((await readdir(path.join(root, 'system'))).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    await outsideUntouched();
  });
});

describe('moveUntrusted', () => {
  it('moves a regular file into a folder it creates', async () => {
    await makeUntrustedDirs(root, 'inbox');
    await writeFile(path.join(root, 'inbox', 'm.md'), 'hello');
    expect(await moveUntrusted(root, 'inbox/m.md', 'inbox/done/m.md')).toBe('moved');
    expect(await readFile(path.join(root, 'inbox', 'done', 'm.md'), 'utf8')).toBe('hello');
    expect(await moveUntrusted(root, 'inbox/m.md', 'inbox/done/m.md')).toBe('missing');
  });

  it('refuses a link as the file, and a link as the target folder, moving nothing', async () => {
    await mkdir(path.join(root, 'inbox'));
    await symlink(path.join(outside, 'secret'), path.join(root, 'inbox', 'evil.md'));
    await expect(moveUntrusted(root, 'inbox/evil.md', 'inbox/done/evil.md')).rejects.toThrow(/not a regular file/);
    expect(await readlink(path.join(root, 'inbox', 'evil.md'))).toBe(path.join(outside, 'secret'));
    await writeFile(path.join(root, 'inbox', 'good.md'), 'agent text');
    await symlink(outside, path.join(root, 'inbox', 'done'));
    await expect(moveUntrusted(root, 'inbox/good.md', 'inbox/done/good.md')).rejects.toThrow(/symbolic link/);
    expect(await readFile(path.join(root, 'inbox', 'good.md'), 'utf8')).toBe('agent text');
    await outsideUntouched();
  });
});

describe('readUntrustedRange and readUntrustedTail', () => {
  it('read a piece and the size, whole lines from the end; undefined when missing', async () => {
    await writeFile(path.join(root, 'log'), 'one\ntwo\nthree\n');
    expect(await readUntrustedRange(root, 'log', { from: 4, maxBytes: 3 })).toEqual({ data: Buffer.from('two'), size: 14 });
    expect(await readUntrustedTail(root, 'log', 8)).toBe('three\n');
    expect(await readUntrustedRange(root, 'nope', { maxBytes: 1 })).toBeUndefined();
    expect(await readUntrustedTail(root, 'no/where', 8)).toBeUndefined();
  });

  it('refuse a link and a FIFO at once, and report kinds without following', async () => {
    await symlink(path.join(outside, 'secret'), path.join(root, 'link'));
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    await expect(readUntrustedRange(root, 'link', { maxBytes: 100 })).rejects.toThrow(/symbolic link/);
    await expect(readUntrustedTail(root, 'fifo', 100)).rejects.toThrow(/not a regular file/);
    expect(await kindOfUntrusted(root, 'link')).toMatchObject({ kind: 'link' });
    expect(await kindOfUntrusted(root, 'fifo')).toMatchObject({ kind: 'other' });
    expect(await kindOfUntrusted(root, 'nope')).toBeUndefined();
  });
});
