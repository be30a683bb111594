/**
 * What the agent typed, as the terminal echoes it back. The agent knows what it typed: its
 * echo is never news (type() is not refused for it) and is left out of what wait() shows.
 */

/** One thing type() sent: text (with or without Enter after it), or a key. */
export type SentInput = { text: string; enter: boolean } | { key: string };

/** Keys whose echo is known: Enter ends the line, C-d at a line's end echoes nothing, BSpace erases a character. */
const PREDICTABLE_KEYS = new Set(['Enter', 'C-d', 'BSpace']);

/** Continuation prompts a line of a paste may follow: bash's `> `, Python's `... `. */
const CONTINUATION = /^(?:> |\.\.\. )/;

/**
 * The lines `sent` puts on a line-oriented terminal as plain echo: the lines ended with Enter,
 * then the line still being typed. `predictable` is false once a key with an unknown effect
 * (Tab, Up, Escape...) was sent: what follows it cannot be told from echo.
 */
export function echoLines(sent: readonly SentInput[]): { lines: string[]; current: string; predictable: boolean } {
  const lines: string[] = [];
  let current = '';
  for (const item of sent) {
    if ('key' in item) {
      if (!PREDICTABLE_KEYS.has(item.key)) return { lines, current, predictable: false };
      if (item.key === 'Enter') {
        lines.push(current);
        current = '';
      } else if (item.key === 'BSpace') {
        current = current.slice(0, -1);
      }
      continue;
    }
    const [first = '', ...rest] = item.text.split('\n');
    current += first;
    for (const line of rest) {
      lines.push(current);
      current = line;
    }
    if (item.enter) {
      lines.push(current);
      current = '';
    }
  }
  return { lines, current, predictable: true };
}

/** The lines `sent` typed, the one still being typed last, without blank lines at the end (an Enter alone echoes no text). */
export function typedLines(sent: readonly SentInput[]): string[] {
  const { lines, current } = echoLines(sent);
  const all = current === '' ? lines : [...lines, current];
  while (all.length > 0 && all[all.length - 1]!.trim() === '') all.pop();
  return all;
}

/**
 * Are `shown` (the new lines since the agent looked, from the row its cursor was on) nothing
 * but the echo of `sent` typed after `prefix` (that row up to the cursor)? The last line may
 * be echo still arriving.
 */
export function onlyEcho(shown: readonly string[], prefix: string, sent: readonly SentInput[]): boolean {
  if (shown.length === 0) return true;
  const { lines, current, predictable } = echoLines(sent);
  const expected = [...lines, current];
  expected[0] = `${prefix}${expected[0] ?? ''}`;
  // After a key with an unknown effect, only the lines typed before it are known.
  const known = predictable ? expected.length : lines.length;
  if (shown.length > known) return false;
  return shown.every((line, i) => {
    const actual = (i === 0 ? line : line.replace(CONTINUATION, '')).trimEnd();
    const want = (expected[i] ?? '').trimEnd();
    return i === shown.length - 1 ? want.startsWith(actual) : actual === want;
  });
}
