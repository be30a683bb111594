/** One terminal's part of one wait result, as the client got it. */
export interface ShownReport {
  text: string;
  elidedLines: number;
}

export interface NothingLostVerdict {
  /** Line numbers never shown (nor counted as left out). */
  missing: number[];
  /** Line numbers shown again without the "possibly repeated" label. */
  unlabelledRepeats: number[];
  /** Lines shown again under the label. */
  labelledRepeats: number;
  last: number;
}

const REPEATED = /^… possibly repeated: the first (\d+) lines? below/;
const ELIDED = /^… (\d+) more lines? left out/;

/**
 * Check numbered lines (`L-<n>`) across wait results: each from 1 to `count` shown (or left
 * out of a long report and counted), in order; shown twice only within a report's labelled
 * first lines.
 */
export function checkNothingLost(reports: readonly ShownReport[], count: number): NothingLostVerdict {
  const seen = new Set<number>();
  const unlabelledRepeats: number[] = [];
  let labelledRepeats = 0;
  let last = 0;
  for (const report of reports) {
    const rows = report.text.split('\n');
    const label = REPEATED.exec(rows[0] ?? '');
    const labelled = label ? Number(label[1]) : 0;
    const body = label ? rows.slice(1) : rows;
    let previous: number | undefined;
    for (const [index, row] of body.entries()) {
      const elided = ELIDED.exec(row);
      if (elided && previous !== undefined) {
        // Left out of the middle: the lines after the head, counted by the note.
        for (let n = previous + 1; n <= previous + Number(elided[1]); n++) seen.add(n);
        previous += Number(elided[1]);
        continue;
      }
      const match = /^L-(\d+)$/.exec(row);
      if (!match) continue;
      const n = Number(match[1]);
      if (seen.has(n)) {
        if (index < labelled) labelledRepeats += 1;
        else unlabelledRepeats.push(n);
      }
      seen.add(n);
      previous = n;
      last = Math.max(last, n);
    }
  }
  const missing: number[] = [];
  for (let n = 1; n <= Math.min(count, last); n++) if (!seen.has(n)) missing.push(n);
  return { missing, unlabelledRepeats, labelledRepeats, last };
}
