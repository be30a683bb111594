import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../../src/snapshot/manifest.js';
import { removable } from '../../../src/snapshot/prune.js';

const snap = (id: string, trigger: Manifest['trigger']): Manifest => ({
  version: 1,
  id,
  instance: 'scout',
  createdAt: '2026-12-06T00:00:00Z',
  trigger,
  data: [],
  container: { entries: [], deleted: [], replaced: [] },
  host: [],
  skipped: [],
  bytes: 0,
  newBytes: 0,
});

describe('removable: which snapshots retention may remove, oldest first', () => {
  it('takes automatic ones oldest first, never a manual one, never the newest of all', () => {
    const all = [snap('1', 'before-tick'), snap('2', 'manual'), snap('3', 'before-rollback'), snap('4', 'before-tick'), snap('5', 'before-tick')];
    expect(removable(all).map((m) => m.id)).toEqual(['1', '3', '4']);
  });
  it('keeps a lone automatic snapshot: it is the newest', () => {
    expect(removable([snap('9', 'before-tick')])).toEqual([]);
    expect(removable([])).toEqual([]);
  });
});
