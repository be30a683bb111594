export interface NothingLostVerdict {
  /** Line numbers never shown nor counted by an elision note, below the highest shown. */
  lost: number[];
  /** Lines in gaps that a "… N lines … are gone" note announced (trimmed past tty.history_limit). */
  announcedGone: number;
  /** Gone notes whose count does not match the gap after them. */
  wrongGoneCounts: number;
  /** Line numbers shown again outside a "possibly repeated" label. */
  unlabelledRepeats: number[];
  /** Lines shown again under the label. */
  labelledRepeats: number;
  /** Elision notes whose count does not meet the lines around them. */
  inconsistentElisions: number;
  /** The highest line number shown. */
  last: number;
}

export function checkNothingLost(reports: ReadonlyArray<{ text: string }>): NothingLostVerdict;
