import { describe, expect, it } from 'vitest';
import { planChanges } from '../../../src/snapshot/container-changes.js';
import { compareTrees } from '../../../src/snapshot/verify.js';
import type { Entry } from '../../../src/snapshot/manifest.js';

const C = 0;
const A = 1;
const D = 2;

describe('planChanges: which container paths a snapshot archives', () => {
  it.each([
    ['an added folder is one subtree', [['/root', C], ['/root/n', A], ['/root/n/a', A]], ['/root/n'], []],
    ['a modified file alone, not its folder', [['/etc', C], ['/etc/passwd', C]], ['/etc/passwd'], []],
    ['a deleted folder stands for its children', [['/usr', C], ['/usr/share', C], ['/usr/share/doc', D], ['/usr/share/doc/x', D]], [], ['/usr/share/doc']],
    ['the data directory mount and the folders holding it are never archived whole', [['/tmp', C], ['/tmp/ak', A], ['/tmp/ak/data', A], ['/tmp/ak/other', A]], ['/tmp/ak/other'], []],
    ['the engine\'s own files are left out', [['/etc', C], ['/etc/hosts', C], ['/usr/sbin/docker-init', A], ['/dev/null', C]], [], []],
    ['siblings that sort around a folder stay apart', [['/a', A], ['/a-b', A], ['/a/b', A]], ['/a', '/a-b'], []],
  ] as const)('%s', (_what, changes, roots, deleted) => {
    const plan = planChanges(changes.map(([Path, Kind]) => ({ Path, Kind })), ['/tmp/ak/data', '/dev', '/etc/hosts', '/usr/sbin/docker-init']);
    expect(plan.roots.map((r) => r.path).sort()).toEqual([...roots].sort());
    expect(plan.deleted).toEqual(deleted);
  });
});

const file = (path: string, digest: string, extra: Partial<Entry> = {}): Entry => ({ path, type: 'file', mode: 0o644, uid: 0, gid: 0, size: 1, mtime: 0, digest, ...extra });

describe('compareTrees: a restored tree against its manifest', () => {
  it('names each difference, and a hard link counts as the file it links to', () => {
    const saved = [file('a', 'x'), file('b', 'y'), { ...file('c', ''), type: 'hardlink' as const, target: 'a', digest: undefined }, file('m', 'z')];
    const now = [{ ...file('c', 'x') }, { ...file('a', ''), type: 'hardlink' as const, target: 'c', digest: undefined }, file('b', 'q'), file('m', 'z', { mode: 0o4755 }), file('extra', 'e')];
    expect(compareTrees(saved, now, { owners: true, extras: true })).toEqual(['b: content differs (sha256 q…, was y…)', 'm: mode 4755, was 644', 'extra: not in the snapshot']);
    expect(compareTrees(saved, now, { owners: true, extras: false })).toHaveLength(2);
    expect(compareTrees(saved, [], { owners: false, extras: false })).toHaveLength(4);
  });
});
