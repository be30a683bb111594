/**
 * The "nothing lost" check shared by the fault bench and the fault test: numbered lines
 * (`L-<n>`) across the wait reports a client got, in order. Every line from 1 on must be
 * shown or counted by an elision note; a line shown again is fine only among a report's
 * first lines under a "possibly repeated" label (counted by position in the output, elided
 * lines included).
 */
const REPEATED = /^… possibly repeated: the first (\d+) lines? below/;
const ELIDED = /^… (\d+) more lines? left out/;
const LINE = /^L-(\d+)$/;
const GONE = /^… (at least )?([\d,]+) lines? printed while no server was attached (?:is|are) gone(?:, and so are the ([\d,]+) lines? before them)?/;
const GONE_MAYBE = /^… ([\d,]+) lines? that a reply sent just before the server stopped may have shown you (?:is|are) gone/;
const count = (text) => Number((text ?? '0').replace(/,/g, ''));

/** One report's line numbers in output order; elided runs are filled in from the line after them. */
function linesOf(text) {
  let rows = text.split('\n');
  const goneMatch = GONE.exec(rows[0] ?? '');
  const maybeMatch = GONE_MAYBE.exec(rows[0] ?? '');
  const gone = goneMatch
    ? { rows: count(goneMatch[2]), maybeSeen: count(goneMatch[3]), atLeast: goneMatch[1] !== undefined }
    : maybeMatch
      ? { rows: 0, maybeSeen: count(maybeMatch[1]), atLeast: false }
      : undefined;
  if (gone) rows = rows.slice(1);
  const label = REPEATED.exec(rows[0] ?? '');
  const numbers = [];
  let pendingElided = 0;
  let inconsistent = 0;
  for (const row of label ? rows.slice(1) : rows) {
    const elided = ELIDED.exec(row);
    if (elided) {
      pendingElided += Number(elided[1]);
      continue;
    }
    const match = LINE.exec(row);
    if (!match) continue;
    const n = Number(match[1]);
    if (pendingElided > 0) {
      const first = n - pendingElided;
      if (numbers.length > 0 && numbers.at(-1) !== first - 1) inconsistent += 1;
      for (let m = first; m < n; m++) numbers.push(m);
      pendingElided = 0;
    }
    numbers.push(n);
  }
  return { numbers, labelled: label ? Number(label[1]) : 0, inconsistent, gone };
}

/**
 * @param {ReadonlyArray<{ text: string }>} reports one terminal's part of each wait result, in the order the client got them
 * A gap right after a note that says lines are gone (past tty.history_limit) is counted as
 * announced, not lost, when it is as long as the note says (or longer, for "at least"); lines
 * the note says a lost reply may have shown count when that reply did not arrive.
 * @returns {{ lost: number[], announcedGone: number, wrongGoneCounts: number, unlabelledRepeats: number[], labelledRepeats: number, inconsistentElisions: number, last: number }}
 */
export function checkNothingLost(reports) {
  const lost = [];
  const unlabelledRepeats = [];
  let labelledRepeats = 0;
  let inconsistentElisions = 0;
  let announcedGone = 0;
  let wrongGoneCounts = 0;
  let last = 0;
  for (const report of reports) {
    const { numbers, labelled, inconsistent, gone } = linesOf(report.text);
    inconsistentElisions += inconsistent;
    if (gone) {
      const gap = Math.max(0, (numbers[0] ?? last + 1) - last - 1);
      const fits = (n) => (gone.atLeast ? gap >= n : gap === n);
      if (!fits(gone.rows) && !fits(gone.rows + gone.maybeSeen)) wrongGoneCounts += 1;
      announcedGone += gap;
      last += gap;
    }
    for (const [position, n] of numbers.entries()) {
      if (n <= last) {
        if (position < labelled) labelledRepeats += 1;
        else unlabelledRepeats.push(n);
        continue;
      }
      for (let m = last + 1; m < n; m++) lost.push(m);
      last = n;
    }
  }
  return { lost, announcedGone, wrongGoneCounts, unlabelledRepeats, labelledRepeats, inconsistentElisions, last };
}
