import { describe, expect, it } from 'vitest';
import type { TtyState } from '../../../../src/tty/seen/seen-store.js';
import { anchorHash, relocate } from '../../../../src/tty/seen/relocation.js';

const LIMIT = 1000;
const STEP = LIMIT / 10;

/** Rows `L-<first>` … as tmux holds them after dropping `dropped` of them (row 0: the oldest kept). */
function rows(dropped: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `L-${dropped + i + 1}`);
}

/** relocate() on a pane of 40 screen rows below its history. */
function relocateIn(state: TtyState, held: string[]) {
  return relocate(state, held, held.length - 40, LIMIT);
}

/** A saved state whose rows are numbered as tmux numbered them before any trim: row r holds L-(r+1). */
function saved(markRow: number, anchorRow: number, extra: Partial<TtyState> = {}): TtyState {
  const anchorRows = rows(0, anchorRow + 1).slice(-8);
  return {
    tty: 0,
    command: 'bash',
    paneId: '%1',
    openedAt: '2026-01-01T00:00:00.000Z',
    cols: 120,
    rows: 40,
    markRow,
    markHistory: markRow - 39,
    markDigest: 'd',
    scrollbackRows: markRow,
    anchor: { row: anchorRow, rows: 8, hash: anchorHash(anchorRows) },
    ...extra,
  };
}

describe('relocate: saved rows found again after tmux trimmed its history', () => {
  it('moves every mark by the rows tmux dropped, and counts none gone when the agent had seen them', () => {
    const { state, gone, found } = relocateIn(saved(900, 950), rows(2 * STEP, 995));
    expect(found).toBe('trimmed');
    expect(gone).toBeUndefined();
    expect(state.markRow).toBe(900 - 2 * STEP);
    expect(state.markHistory).toBe(900 - 39 - 2 * STEP);
    expect(state.scrollbackRows).toBe(900 - 2 * STEP);
  });

  it('counts exactly the unseen rows tmux dropped, and those a lost reply may have shown', () => {
    const { state, gone } = relocateIn(saved(150, 980, { shown: { row: 170, history: 131, digest: 'e' } }), rows(3 * STEP, 990));
    expect(gone).toEqual({ rows: 3 * STEP - 170, maybeSeen: 20, atLeast: false, limit: LIMIT });
    expect(state.markRow).toBe(0);
    expect(state.shown).toBeUndefined();
  });

  it('says "at least" when the anchor itself is gone', () => {
    const { state, gone } = relocateIn(saved(150, 300), rows(4 * STEP, 990));
    expect(gone?.atLeast).toBe(true);
    expect(gone?.rows).toBeGreaterThanOrEqual(STEP);
    expect(state.markRow).toBe(0);
  });

  it('keeps the marks when tmux never trimmed and the rows changed otherwise', () => {
    const before = saved(150, 300);
    expect(relocateIn(before, Array.from({ length: 500 }, () => '')).state).toEqual(before);
  });

  it('finds the anchor off the trim steps when our numbering slipped, and moves the marks with it', () => {
    // Saved 7 rows too high (a row counted that tmux never had): the marks are 7 too high as well.
    const slipped = saved(907, 950);
    const { state, gone, found } = relocateIn({ ...slipped, anchor: { ...slipped.anchor!, row: 957 } }, rows(2 * STEP, 995));
    expect(found).toBe('elsewhere');
    expect(gone).toBeUndefined();
    expect(state.markRow).toBe(900 - 2 * STEP);
  });

  it('trusts no anchor of rows that repeat, and counts nothing gone where tmux has never trimmed', () => {
    const blank = { ...saved(150, 300), anchor: { row: 300, rows: 8, hash: anchorHash(Array.from({ length: 8 }, () => '')) } };
    const held = [...rows(0, 500), ...Array.from({ length: 20 }, () => ''), ...rows(520, 350)];
    expect(relocateIn(blank, held)).toEqual({ state: blank, found: 'nowhere' });
  });

  it('counts nothing gone when the anchor is missing but the history is below where tmux first trims', () => {
    // 895 rows of history and a 40-row screen: more rows than limit - limit/10 in all, yet never trimmed.
    const before = saved(150, 300, { anchor: { row: 300, rows: 8, hash: 'not-there' } });
    expect(relocateIn(before, rows(0, 935))).toEqual({ state: before, found: 'nowhere' });
  });
});
