import { type GoneRows, anchorHash } from './relocation.js';
import type { TtyEmulator } from '../screen/tty-emulator.js';

/** A seen mark in our numbering (rows since the emulator began), turned into the host's when saved. */
interface OwnMark {
  abs: number;
  /** Our count of scrolled rows then. */
  scrolls: number;
  digest: string;
}

/**
 * The rows just above the cursor when the state was saved, in the host's numbering: where
 * they are at re-adoption tells how many rows the host trimmed meanwhile (see relocation.ts).
 */
export interface Anchor {
  /** The last row of the window. */
  row: number;
  rows: number;
  hash: string;
}

/** Where the agent's seen mark is in the host's own numbering (what survives a restart). */
export interface HostMark {
  /** First row not yet seen: history size + cursor row when the agent last looked. */
  row: number;
  /** The host's history size then (smaller later: it dropped old rows). */
  history: number;
  /** A digest of the screen and cursor then. */
  digest: string;
}

/** Rows of the anchor window. */
const ANCHOR_ROWS = 8;

/**
 * What the agent has seen of one terminal, as replies carry it: the mark of the last reply
 * known delivered, those of replies still in flight, and what a restart left to say (rows a
 * lost reply may have shown, rows the host trimmed unseen). Kept in our numbering and turned
 * into the host's, which moves when it trims its history, whenever asked.
 */
export class SeenMarks {
  private delivered: OwnMark = { abs: 0, scrolls: 0, digest: '' };
  /** Marks of replies sent but not known delivered, oldest first, by delivery id. */
  private inFlight: Array<{ id: string; mark: OwnMark }> = [];
  /** Rows printed while no server was attached that the host trimmed before anyone saw them (reported once). */
  private ownGone: GoneRows | undefined;
  /** Rows our numbering counts that the host no longer has (it trimmed its history), at the last sync. */
  private hostOffset = 0;
  /** After a restart: rows before this (our numbering) may have been shown by a reply that did not arrive. */
  private repeatUntil: number | undefined;

  /** The agent's mark in the host's numbering now. */
  get mark(): HostMark {
    return this.toHost(this.delivered);
  }
  /** The latest reply's mark while its delivery is unconfirmed. */
  get shownMark(): HostMark | undefined {
    const last = this.inFlight.at(-1);
    return last && this.toHost(last.mark);
  }
  /** Rows lost before anyone saw them, for the next report. */
  get gone(): GoneRows | undefined {
    return this.ownGone;
  }
  /**
   * Gone rows no reply has told the agent of yet (saved, so that a restart tells them). Once a
   * reply carried them they are not saved: it may have arrived, and a second note would count twice.
   */
  get untold(): GoneRows | undefined {
    return this.ownGone;
  }
  /** The host described the terminal when we had counted `scrolls` scrolled rows. */
  hostHad(scrolls: number, historySize: number): void {
    this.hostOffset = Math.max(0, scrolls - historySize);
  }
  /** A row of ours in the host's numbering now. */
  hostRow(abs: number): number {
    return abs - this.hostOffset;
  }
  /** The rows above the cursor, to find them again in the host after a restart. */
  anchor(emulator: TtyEmulator): Anchor | undefined {
    const end = emulator.cursorAbs;
    const rows = emulator.readRows(Math.max(emulator.firstHeldAbs, end - ANCHOR_ROWS), end);
    if (rows.length === 0) return undefined;
    return { row: this.hostRow(end - 1), rows: rows.length, hash: anchorHash(rows.map((r) => r.text)) };
  }
  /** A reply (`deliveryId`; undefined: the caller has it already) shows everything up to `abs`. */
  shown(deliveryId: string | undefined, mark: OwnMark): void {
    this.repeatUntil = undefined;
    this.ownGone = undefined;
    if (deliveryId === undefined) this.delivered = mark;
    else this.inFlight.push({ id: deliveryId, mark });
  }
  /** The reply `deliveryId` reached the client: what it showed is seen for good. */
  reached(deliveryId: string): boolean {
    const index = this.inFlight.findIndex((f) => f.id === deliveryId);
    if (index < 0) return false;
    this.delivered = this.inFlight[index]!.mark;
    this.inFlight.splice(0, index + 1);
    return true;
  }
  /**
   * After re-adoption (our numbering is the host's now): the marks the server before saved, and
   * the rows gone unseen (those it had not told yet, then those found trimmed since).
   */
  restore(mark: HostMark, shown: HostMark | undefined, untold?: GoneRows, gone?: GoneRows): void {
    const own = (m: HostMark): OwnMark => ({ abs: m.row, scrolls: m.history, digest: m.digest });
    this.delivered = own(mark);
    if (shown && shown.row > mark.row) {
      this.inFlight = [{ id: 'before-restart', mark: own(shown) }];
      this.repeatUntil = shown.row;
    }
    const all = untold && gone ? followedBy(untold, gone) : (gone ?? untold);
    if (all && all.rows + all.maybeSeen > 0) this.ownGone = all;
  }
  /** How many rows from `markAbs` on may repeat a reply lost in a restart. */
  possiblyRepeatedRows(markAbs: number): number {
    return this.repeatUntil === undefined ? 0 : Math.max(0, this.repeatUntil - markAbs);
  }

  private toHost(mark: OwnMark): HostMark {
    const history = mark.scrolls - this.hostOffset;
    const cursorY = mark.abs - mark.scrolls;
    return { row: Math.max(0, history + cursorY), history: Math.max(0, history), digest: mark.digest };
  }
}

/** Gone rows told as one: `later` were trimmed after `earlier` (rows a lost reply may have shown between them count as gone). */
function followedBy(earlier: GoneRows, later: GoneRows): GoneRows {
  return { rows: earlier.rows + later.maybeSeen + later.rows, maybeSeen: earlier.maybeSeen, atLeast: earlier.atLeast || later.atLeast, limit: later.limit };
}
