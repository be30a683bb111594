import { type ForegroundSample, classifyForeground } from '../probe/input-wait.js';
import type { SendOptions } from '../host/terminal-host.js';
import type { Tty } from '../terminal/tty.js';
import type { TtyContext } from '../terminal/tty-context.js';

/**
 * Bytes of a paste sent at once to a program that reads the terminal itself, line by line
 * (python3's REPL, cat): two parts in flight stay under the 4 KiB a Linux terminal holds unread.
 */
export const PASTE_PART_BYTES = 1536;
/** How long one part may wait for the program to take the one before; then the rest goes at once, as before. */
const PART_WAIT_MS = 20_000;
/** A program that has not even woken to read by then is not reading (typed ahead of a busy one): the rest goes at once. */
const WAKE_WAIT_MS = 2_000;
const POLL_MS = 15;

/** Pure: `text` in parts of whole lines of at most `max` bytes (a longer line is a part of its own). */
export function pasteParts(text: string, max = PASTE_PART_BYTES): string[] {
  const parts: string[] = [];
  let part: string[] = [];
  let bytes = 0;
  for (const line of text.split('\n')) {
    const size = Buffer.byteLength(line) + 1;
    if (part.length > 0 && bytes + size > max) {
      parts.push(part.join('\n'));
      part = [];
      bytes = 0;
    }
    part.push(line);
    bytes += size;
  }
  parts.push(part.join('\n'));
  return parts;
}

/**
 * A long paste into a program that did not ask for bracketed paste goes in parts, each once the
 * program waits for input again. Sent at once, what the terminal cannot hold waits, and reaches
 * the terminal while the program runs a line with echo on (readline turns it off only while it
 * reads): the terminal echoes it there, out of order and into the output (`f f72(x):` amid a
 * pasted script's output). A program that does not wake to read within 2 s, or does not come back to
 * wait for input within 20 s, gets the rest at once.
 */
export async function sendPaste(ctx: TtyContext, tty: Tty, text: string, options: SendOptions): Promise<void> {
  const parts = options.bracketed ? [text] : pasteParts(text);
  let before: ForegroundSample | undefined;
  for (const [i, part] of parts.entries()) {
    if (i > 0 && !(await tookPart(ctx, tty, before))) {
      await ctx.host.send(tty.id, { kind: 'paste', text: parts.slice(i).join('\n') }, options);
      return;
    }
    const last = i === parts.length - 1;
    if (!last) before = await ctx.inputWatch.foreground(tty.state?.pid);
    // Each part but the last ends its last line: the program reads whole lines.
    await ctx.host.send(tty.id, part.includes('\n') ? { kind: 'paste', text: part } : { kind: 'text', text: part }, { ...options, enter: last ? options.enter : true });
  }
}

/** Wait until the program woke since `before` (sampled before the part went out) and sleeps again waiting for input: it has read the part. */
async function tookPart(ctx: TtyContext, tty: Tty, before: ForegroundSample | undefined): Promise<boolean> {
  if (classifyForeground(before) === 'unknown') return false;
  const runs = new Map(before?.processes.map((p) => [p.pid, p.runs]));
  const start = Date.now();
  let woke = false;
  while (Date.now() - start < (woke ? PART_WAIT_MS : WAKE_WAIT_MS) && tty.alive) {
    const sample = await ctx.inputWatch.foreground(tty.state?.pid);
    woke ||= sample?.processes.some((p) => runs.get(p.pid) !== p.runs) ?? false;
    if (woke && classifyForeground(sample) === 'input') return true;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return false;
}
