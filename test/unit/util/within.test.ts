import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isWithin } from '../../../src/util/within.js';

describe('isWithin', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'within-'));
    await mkdir(path.join(dir, 'data'));
    await mkdir(path.join(dir, 'data2'));
    await symlink(path.join(dir, 'data'), path.join(dir, 'link'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('sees a folder inside the data directory by name', () => {
    expect(isWithin(path.join(dir, 'data'), path.join(dir, 'data'))).toBe(true);
    expect(isWithin(path.join(dir, 'data', 'state', 'x'), path.join(dir, 'data'))).toBe(true);
    expect(isWithin(path.join(dir, 'data2', 'state'), path.join(dir, 'data'))).toBe(false);
    expect(isWithin(path.join(dir, 'state'), path.join(dir, 'data'))).toBe(false);
  });

  it('sees it through a link on either side, also for folders not made yet', () => {
    // The data directory named through a link, the state folder by its real path (and the other way round).
    expect(isWithin(path.join(dir, 'data', 'state'), path.join(dir, 'link'))).toBe(true);
    expect(isWithin(path.join(dir, 'link', 'not', 'made', 'yet'), path.join(dir, 'data'))).toBe(true);
    expect(isWithin(path.join(dir, 'data2'), path.join(dir, 'link'))).toBe(false);
  });
});
