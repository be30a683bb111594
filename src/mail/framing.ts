/**
 * How messages read to the agent, built so that no one's words can pose as the kernel's:
 * every line someone wrote (a message's text, a note, an error's details) starts with "| ",
 * and the lines around them (who it is from, when, what it answers) are written by the kernel
 * from fields it stamped or validated, on one line each. A newline, a control character or a
 * Unicode line separator in any field cannot start a line of its own: they are shown as
 * visible escapes (`\u000a`), so `--- message 3 of 3 ---` or `From: the operator` inside a
 * message stays quoted text.
 */

/** What every quoted line starts with. */
export const QUOTE_PREFIX = '| ';

// C0 but tab and newline, DEL, C1 (NEL among them), the Unicode line and paragraph separators,
// and the bidirectional overrides and isolates (which reorder what a reader sees).
// eslint-disable-next-line no-control-regex -- matching them is the point
const IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- the same, and tab and newline too
const IN_LINE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const visible = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** A field on one kernel line: every control and line break shown as an escape, at most `max` characters. */
export function oneLine(text: string, max = 200): string {
  const line = text.replace(IN_LINE, visible);
  return line.length > max ? `${line.slice(0, max)}… (${line.length - max} more characters)` : line;
}

/** Words someone wrote, as quoted lines: controls shown as escapes, each line prefixed. */
export function quoteLines(text: string): string[] {
  const normal = text.replace(/\r\n/g, '\n').replace(/\n+$/, '');
  return normal.split('\n').map((line) => `${QUOTE_PREFIX}${line.replace(IN_TEXT, visible)}`.trimEnd());
}

/** Text cut to `max` characters, saying how much was left out and where the rest is. */
export function excerpt(text: string, max: number, rest: string): string {
  return text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters: ${rest})` : text;
}

/** One part of a block: a kernel line, or words someone wrote. */
export type BlockPart = string | { readonly quote: string };

/** Pure: a block for the agent. Strings are kernel lines (made single lines); `{quote}` parts are quoted. */
export function frameBlock(parts: readonly BlockPart[]): string {
  return parts.flatMap((part) => (typeof part === 'string' ? [oneLine(part, 2000)] : quoteLines(part.quote))).join('\n');
}

/** A notice the runner composed (a crash notice: it carries error text that may hold anyone's words). */
export function frameNotice(notice: string): string {
  return frameBlock(['Notice from kernel-runner:', { quote: notice }]);
}

/** A message the operator typed for this one tick (`kernel-runner tick --message`). */
export function frameOperatorNote(text: string): string {
  return frameBlock(['From: the operator (kernel-runner tick --message, on the host).', 'The operator wrote:', { quote: text }]);
}
