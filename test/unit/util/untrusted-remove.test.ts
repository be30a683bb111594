import { execFileSync } from 'node:child_process';
import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { removeUntrustedTree } from '../../../src/util/untrusted-remove.js';

// What the agent leaves in its data directory is removed without following any of it (the races are in test/integration/escape/instance-removal).
let root: string;
let outside: string;
const CANARY = 'host-secret-canary-7a2c';

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ak-untrusted-rm-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'ak-host-rm-'));
  await writeFile(path.join(outside, 'secret'), CANARY);
});
afterEach(async () => {
  await chmod(path.join(root, 'tree', 'locked'), 0o755).catch(() => undefined);
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

async function outsideUntouched(): Promise<void> {
  expect((await readdir(outside)).sort()).toEqual(['secret']);
  expect(await readFile(path.join(outside, 'secret'), 'utf8')).toBe(CANARY);
}

async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

/** A tree with every kind of entry the agent can make, links to the host folder at each depth. */
async function plant(tree: string): Promise<void> {
  await mkdir(path.join(tree, 'a', 'b', 'c'), { recursive: true });
  for (const dir of [tree, path.join(tree, 'a'), path.join(tree, 'a', 'b', 'c')]) {
    await writeFile(path.join(dir, 'file'), 'agent\n');
    await symlink(outside, path.join(dir, 'to-host-dir'));
    await symlink(path.join(outside, 'secret'), path.join(dir, 'to-host-file'));
    await symlink(path.relative(dir, outside), path.join(dir, 'climbing'));
  }
  execFileSync('mkfifo', [path.join(tree, 'a', 'fifo')]);
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(path.join(tree, 'a', 'b', 'socket'), resolve));
  server.close();
  // Entries their owner locked: root (as the host runs for a rootful engine) removes them all the same.
  if (process.getuid?.() !== 0) return;
  await writeFile(path.join(tree, 'locked-file'), 'x');
  await chmod(path.join(tree, 'locked-file'), 0);
  await mkdir(path.join(tree, 'locked'));
  await writeFile(path.join(tree, 'locked', 'inside'), 'x');
  await chmod(path.join(tree, 'locked'), 0);
}

it('removes a tree of files, links to the host, a FIFO, a socket and locked entries, and only the tree', async () => {
  await plant(path.join(root, 'tree'));
  await writeFile(path.join(root, 'beside'), 'stays\n');
  const result = await removeUntrustedTree(root, 'tree');
  expect(result).toEqual({ removed: true, left: [] });
  expect(await readdir(root)).toEqual(['beside']);
  await outsideUntouched();
});

it('removes the root itself, and a root named through the operator\'s link (the link too)', async () => {
  const data = path.join(root, 'data');
  await plant(data);
  expect(await removeUntrustedTree(data, '')).toEqual({ removed: true, left: [] });
  expect(await exists(data)).toBe(false);
  const real = path.join(root, 'real');
  await plant(real);
  await symlink(real, path.join(root, 'named'));
  expect(await removeUntrustedTree(path.join(root, 'named'), '')).toEqual({ removed: true, left: [] });
  expect(await readdir(root)).toEqual([]);
  await outsideUntouched();
});

it('removes a link that stands where the tree was, never what it points to; a missing tree is removed already', async () => {
  await symlink(outside, path.join(root, 'tree'));
  expect(await removeUntrustedTree(root, 'tree')).toEqual({ removed: true, left: [] });
  expect(await removeUntrustedTree(root, 'tree')).toEqual({ removed: true, left: [] });
  await mkdir(path.join(root, 'a'));
  await symlink(outside, path.join(root, 'a', 'b'));
  // A link on the way to the tree: refused, as every untrusted path is.
  await expect(removeUntrustedTree(root, 'a/b/tree')).rejects.toThrow(/symbolic link/);
  await outsideUntouched();
});
