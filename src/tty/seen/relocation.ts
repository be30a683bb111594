import { createHash } from 'node:crypto';
import type { TtyState } from './seen-store.js';
import type { TerminalHost } from '../host/terminal-host.js';

/** Rows printed while no server was attached that the host dropped before anyone saw them. */
export interface GoneRows {
  /** Gone rows after everything a reply may have shown. */
  rows: number;
  /** Gone rows before those, that a reply sent just before the server died may have shown. */
  maybeSeen: number;
  /** The count is a lower bound: every row the former server knew is gone too. */
  atLeast: boolean;
  /** The history limit that dropped them. */
  limit: number;
}

/**
 * tmux numbers a pane's rows from the oldest it keeps, and when its history reaches the limit
 * it drops the oldest tenth at once, so rows move up by a multiple of limit/10; below
 * limit - limit/10 it has never dropped any. The saved state names rows in the numbering of its
 * day, with the rows that were just above the cursor then (the anchor). Before adopting:
 * does the anchor still sit where it was, and has tmux never trimmed? Then nothing moved
 * (`moved` false; the capture must confirm that tmux still had not trimmed at its own
 * instant: see mayHaveTrimmed); otherwise adoption captures the whole history (plain rows, at
 * the snapshot's instant) and relocates there.
 */
export async function checkAnchor(host: TerminalHost, id: string, saved: TtyState): Promise<{ moved: boolean; limit: number } | undefined> {
  const anchor = saved.anchor;
  if (!anchor) return undefined;
  const here = await host.rowsAt(id, [windowAt(anchor, 0)]);
  if (!here) return undefined;
  return { moved: !matches(anchor, here.windows[0]) || mayHaveTrimmed(here.historySize, here.historyLimit), limit: here.historyLimit };
}

/** Could tmux have dropped rows by the time its history held `historySize` rows? (Never below limit - limit/10.) */
export function mayHaveTrimmed(historySize: number, limit: number): boolean {
  return historySize >= limit - trimStep(limit);
}

/**
 * Find the anchor among the shifts tmux can have made, in `rows` (the whole history and
 * screen as plain rows, row 0 the oldest, when tmux held `historySize` rows of history), and
 * move every saved row by the same amount. Rows after the agent's mark that fell off the top
 * are gone: counted exactly while the anchor is still there, as a lower bound once it is not.
 * `found` says where the anchor was: at a shift tmux's trims explain, elsewhere (our numbering
 * slipped; the marks slipped with it, so they move by the same amount), or nowhere.
 */
export function relocate(
  saved: TtyState,
  rows: readonly string[],
  historySize: number,
  limit: number,
): { state: TtyState; gone?: GoneRows; found: 'trimmed' | 'elsewhere' | 'nowhere' } {
  const anchor = saved.anchor;
  if (!anchor) return { state: saved, found: 'nowhere' };
  const step = trimStep(limit);
  const atStep = findAtStep(anchor, rows, step);
  const at = atStep ?? findAnywhere(anchor, rows);
  const found = atStep !== undefined ? 'trimmed' : at !== undefined ? 'elsewhere' : 'nowhere';
  // Not found, and tmux has never trimmed: the rows changed otherwise (a clear, a resize); keep the marks.
  if (at === undefined && !mayHaveTrimmed(historySize, limit)) return { state: saved, found };
  // Not found: at least as far as the anchor's own rows were trimmed.
  const shift = at ?? firstShiftPast(anchor, step);
  const shownRow = Math.max(saved.markRow, saved.shown?.row ?? 0);
  const goneRows = Math.max(0, shift - shownRow);
  const maybeSeen = Math.max(0, Math.min(shift, shownRow) - saved.markRow);
  const state: TtyState = {
    ...saved,
    markRow: Math.max(0, saved.markRow - shift),
    markHistory: Math.max(0, saved.markHistory - shift),
    scrollbackRows: Math.max(0, saved.scrollbackRows - shift),
  };
  delete state.shown;
  delete state.anchor;
  if (saved.shown && saved.shown.row - shift > state.markRow) state.shown = { ...saved.shown, row: saved.shown.row - shift, history: Math.max(0, saved.shown.history - shift) };
  return goneRows + maybeSeen > 0 ? { state, gone: { rows: goneRows, maybeSeen, atLeast: at === undefined, limit }, found } : { state, found };
}

/** The smallest shift by whole trims at which the anchor's rows are. */
function findAtStep(anchor: Anchor, rows: readonly string[], step: number): number | undefined {
  for (let shift = 0; windowAt(anchor, shift).from >= 0; shift += step) {
    const { from, to } = windowAt(anchor, shift);
    if (matches(anchor, rows.slice(from, to + 1))) return shift;
  }
  return undefined;
}

/** The shift at which the anchor's rows are, if they are at exactly one place (blank or repeated rows match many). */
function findAnywhere(anchor: Anchor, rows: readonly string[]): number | undefined {
  let found: number | undefined;
  for (let from = 0; from + anchor.rows <= rows.length; from++) {
    if (!matches(anchor, rows.slice(from, from + anchor.rows))) continue;
    if (found !== undefined) return undefined;
    found = anchor.row - anchor.rows + 1 - from;
  }
  return found;
}

/** The first shift by whole trims that drops the anchor's top row. */
function firstShiftPast(anchor: Anchor, step: number): number {
  let shift = 0;
  while (windowAt(anchor, shift).from >= 0) shift += step;
  return shift;
}

/** The anchor's digest: the rows' text without trailing blanks (the host's plain capture drops them too). */
export function anchorHash(rows: readonly string[]): string {
  return createHash('sha256')
    .update(rows.map((r) => r.trimEnd()).join('\n'))
    .digest('hex')
    .slice(0, 24);
}

type Anchor = NonNullable<TtyState['anchor']>;

function trimStep(limit: number): number {
  return Math.max(1, Math.floor(limit / 10));
}

function windowAt(anchor: Anchor, shift: number): { from: number; to: number } {
  return { from: anchor.row - anchor.rows + 1 - shift, to: anchor.row - shift };
}

function matches(anchor: Anchor, rows: readonly string[] | undefined): boolean {
  return rows !== undefined && rows.length === anchor.rows && anchorHash(rows) === anchor.hash;
}
