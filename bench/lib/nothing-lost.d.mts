export interface NothingLostVerdict {
  /** Line numbers never shown nor counted by an elision note, below the highest shown. */
  lost: number[];
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
