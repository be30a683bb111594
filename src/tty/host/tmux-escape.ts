/**
 * The two text encodings of tmux control mode: how it escapes pane output in
 * `%output` lines, and how our commands must quote their arguments.
 */

const BACKSLASH = 0x5c;

/**
 * Decode the payload of a `%output` line. tmux writes bytes below 0x20 and the backslash
 * as `\ooo` (three octal digits) and every other byte as itself, so UTF-8 stays raw:
 * decode to bytes, never through a JS string, or a character split across two
 * `%output` lines would be mangled.
 */
export function decodeOctalEscapes(line: Uint8Array, start = 0, end = line.length): Buffer {
  const out = Buffer.allocUnsafe(end - start);
  return out.subarray(0, decodeOctalEscapesInto(line, start, end, out, 0));
}

/** Decode into `out` at `at` (room for `end - start` bytes); returns how many bytes it wrote. */
export function decodeOctalEscapesInto(line: Uint8Array, start: number, end: number, out: Uint8Array, at: number): number {
  let n = at;
  let i = start;
  while (i < end) {
    const byte = line[i]!;
    if (byte === BACKSLASH && i + 3 < end && isOctal(line[i + 1]!) && isOctal(line[i + 2]!) && isOctal(line[i + 3]!)) {
      out[n++] = ((line[i + 1]! - 48) << 6) | ((line[i + 2]! - 48) << 3) | (line[i + 3]! - 48);
      i += 4;
    } else {
      out[n++] = byte;
      i += 1;
    }
  }
  return n - at;
}

function isOctal(byte: number): boolean {
  return byte >= 48 && byte <= 55;
}

/**
 * Quote one argument for a tmux command line (control mode reads one command per line).
 * Double quotes, with `\`, `"` and `$` escaped and control characters as octal escapes,
 * so any text (newlines included) survives tmux's parser unchanged.
 */
export function quoteTmuxArgument(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\' || ch === '"' || ch === '$') out += `\\${ch}`;
    else if (code < 0x20 || code === 0x7f) out += `\\${code.toString(8).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
