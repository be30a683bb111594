import type { LineRange, TtyFiles } from '../../observe/tty-files.js';
import type { UnseenTracker } from './unseen-tracker.js';
import type { TtyEmulator } from '../screen/tty-emulator.js';

/** What the pointer reads of a terminal: its files, its screen and the agent's mark. */
export interface LineSource {
  readonly files: TtyFiles;
  readonly emulator: TtyEmulator;
  readonly tracker: Pick<UnseenTracker, 'markAbs'>;
}

/**
 * Where the lines `first`..`last` of a terminal's new output are (0-based, counted from
 * the line the agent had last seen up to): line ranges of the scrollback files, then rows
 * of the screen file for lines that have not left the screen yet. Paths as the agent sees
 * them (`view`). undefined: not known (written by a server before this one).
 */
export function locateLines(tty: LineSource, first: number, last: number, view: (hostPath: string) => string): Array<LineRange & { rows?: true }> | undefined {
  const found = tty.files.locate(first, last);
  if (!found) return undefined;
  const ranges: Array<LineRange & { rows?: true }> = found.ranges.map((r) => ({ ...r, file: view(r.file) }));
  if (found.onScreen > 0) {
    const rows = screenRows(tty, last - found.onScreen + 1, last);
    if (!rows) return undefined;
    ranges.push({ file: view(tty.files.screen), from: rows.from, to: rows.to, rows: true });
  }
  return ranges;
}

/** Screen rows (1-based, as the `screen` file has them) of lines `first`..`last` that are still on the screen. */
function screenRows(tty: LineSource, first: number, last: number): { from: number; to: number } | undefined {
  const emulator = tty.emulator;
  const top = emulator.totalScrolls;
  const inFiles = tty.files.linesInFiles();
  if (inFiles === undefined) return undefined;
  const mark = tty.tracker.markAbs;
  // The line numbering's first line on the screen: the mark row, or the first row that starts a line.
  let index = mark >= top ? -1 : inFiles - 1;
  let from: number | undefined;
  let to: number | undefined;
  for (const row of emulator.readRows(Math.max(top, mark), emulator.contentEndAbs())) {
    if (row.abs === mark || !row.wrapped) index += 1;
    if (index === -1 || index < first) continue;
    if (index > last) break;
    from ??= row.abs - top + 1;
    to = row.abs - top + 1;
  }
  return from === undefined || to === undefined ? undefined : { from, to };
}

/** Left-out lines up to this many are named with one command that prints them all; more are read in parts. */
const READ_AT_ONCE = 200;

/**
 * Pure: where left-out lines are, and the command that prints them, so that the agent can run it
 * as it is (the ranges of several files in one command line, in order).
 */
export function describeLocation(ranges: ReadonlyArray<LineRange & { rows?: true }>): string {
  const parts = ranges.map((r) => `${r.rows ? 'rows' : 'lines'} ${r.from}-${r.to} of ${r.file}`);
  const list = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts[0];
  if (ranges.reduce((sum, r) => sum + r.to - r.from + 1, 0) <= READ_AT_ONCE) {
    return `they are ${list}; print them all with \`${ranges.map((r) => `sed -n ${r.from},${r.to}p ${r.file}`).join('; ')}\``;
  }
  const start = ranges[0]!;
  const to = Math.min(start.to, start.from + READ_AT_ONCE - 1);
  return `they are ${list}; read them in parts of ${READ_AT_ONCE} lines, the first with \`sed -n ${start.from},${to}p ${start.file}\``;
}
