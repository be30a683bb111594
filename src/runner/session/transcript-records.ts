/**
 * What kernel-runner adds to a tick's transcript (`tick-NNN.jsonl`) so that a person can read
 * it: when each line of the harness's stream arrived, and what the tick started with.
 */

/** A stream line with the time it arrived as its first key (`received_at`); a line that is not a JSON object stays as it is. */
export function stampLine(line: string, at: Date = new Date()): string {
  return line.startsWith('{"') ? `{"received_at":"${at.toISOString()}",${line.slice(1)}` : line;
}
