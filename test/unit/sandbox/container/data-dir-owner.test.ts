import { chown, lstat, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { giveDataDirTo } from '../../../../src/sandbox/container/data-dir-owner.js';

const ids = { uid: 100_000, gid: 100_000, size: 65_536 };
const asRoot = process.getuid?.() === 0;

describe.skipIf(!asRoot)('giving the data directory to a remapped container root', () => {
  const made: string[] = [];
  afterEach(async () => {
    for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it('shifts every entry into the range once, and follows no link out of it', async () => {
    const top = await mkdtemp(path.join(os.tmpdir(), 'ak-owner-'));
    made.push(top);
    const data = path.join(top, 'data');
    const outside = path.join(top, 'host-file');
    await writeFile(outside, 'host');
    await mkdir(path.join(data, 'a', 'b'), { recursive: true });
    await writeFile(path.join(data, 'a', 'b', 'f'), 'x');
    await writeFile(path.join(data, 'by-1000'), 'y');
    await chown(path.join(data, 'by-1000'), 1000, 1000);
    await symlink(outside, path.join(data, 'a', 'link-out'));
    await symlink(top, path.join(data, 'dir-link-out'));

    expect(await giveDataDirTo(data, ids)).toBe(7);
    const owner = async (rel: string) => {
      const info = await lstat(path.join(data, rel));
      return [info.uid, info.gid];
    };
    expect(await owner('.')).toEqual([100_000, 100_000]);
    expect(await owner('a/b/f')).toEqual([100_000, 100_000]);
    expect(await owner('by-1000')).toEqual([101_000, 101_000]);
    expect(await owner('a/link-out')).toEqual([100_000, 100_000]);
    // What the links point at, outside, is untouched.
    expect([(await lstat(outside)).uid, (await lstat(top)).uid]).toEqual([0, 0]);
    // Done once: the data directory is the range's now.
    expect(await giveDataDirTo(data, ids)).toBe(0);
  });
});
