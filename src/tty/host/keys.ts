import { CodedError } from '../../errors.js';

/** Key names `type` sends as keys (no Enter after them), as tmux names them. */
export const NAMED_KEYS = [
  'Enter',
  'Tab',
  'Escape',
  'BSpace',
  'Up',
  'Down',
  'Left',
  'Right',
  'Home',
  'End',
  'PageUp',
  'PageDown',
  ...Array.from({ length: 12 }, (_, i) => `F${i + 1}`),
] as const;

const CONTROL_KEYS = Array.from({ length: 26 }, (_, i) => `C-${String.fromCharCode(97 + i)}`);
const VALID_KEYS = new Set<string>([...NAMED_KEYS, ...CONTROL_KEYS]);

export const VALID_KEYS_DESCRIPTION = `C-a … C-z (C-c, C-d, C-z…), ${NAMED_KEYS.slice(0, 12).join(', ')}, F1-F12`;

/**
 * Keys that stop what runs in a terminal. They pass observe-before-act for the terminal they
 * go to: a runaway loop prints between every wait and type, and must still be stoppable.
 */
export const INTERRUPT_KEYS: ReadonlySet<string> = new Set(['C-c', 'C-z']);

/** What `type` will send for a given text. */
export type TypedInput =
  | { kind: 'key'; key: string }
  | { kind: 'text'; text: string }
  | { kind: 'paste'; text: string };

/** Text that was surely meant as a key name: `C-x`, `M-x`, `S-x`, `F13`... */
const LOOKS_LIKE_KEY = /^(?:[CMS]-\S+|F\d+)$/;

/**
 * Decide how to send `text`: a key name is a key; one line is literal text; several
 * lines are a paste. A single trailing newline is dropped (Enter does its job).
 */
export function parseTypedText(text: string): TypedInput {
  if (VALID_KEYS.has(text)) return { kind: 'key', key: text };
  if (LOOKS_LIKE_KEY.test(text)) {
    throw new CodedError('UNKNOWN_KEY', `"${text}" is not a key type() knows. Valid keys: ${VALID_KEYS_DESCRIPTION}. To send it as literal text, add a space or use enter: true with the words you mean.`, {
      details: { text, validKeys: [...VALID_KEYS] },
    });
  }
  const body = text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text;
  if (/[\r\n]/.test(body)) return { kind: 'paste', text: body.replace(/\r\n/g, '\n') };
  return { kind: 'text', text: body };
}

const CSI = '\x1b[';
const SS3 = '\x1bO';
const KEY_BYTES: Readonly<Record<string, string>> = {
  Enter: '\r',
  Tab: '\t',
  Escape: '\x1b',
  BSpace: '\x7f',
  PageUp: `${CSI}5~`,
  PageDown: `${CSI}6~`,
  F1: `${SS3}P`,
  F2: `${SS3}Q`,
  F3: `${SS3}R`,
  F4: `${SS3}S`,
  F5: `${CSI}15~`,
  F6: `${CSI}17~`,
  F7: `${CSI}18~`,
  F8: `${CSI}19~`,
  F9: `${CSI}20~`,
  F10: `${CSI}21~`,
  F11: `${CSI}23~`,
  F12: `${CSI}24~`,
};
const CURSOR_KEYS: Readonly<Record<string, string>> = { Up: 'A', Down: 'B', Right: 'C', Left: 'D', Home: 'H', End: 'F' };

/**
 * The bytes an xterm sends for a key name of parseTypedText (for terminals without tmux,
 * which otherwise does this): cursor keys follow the program's application-cursor mode.
 */
export function keyBytes(key: string, applicationCursor = false): string {
  const control = /^C-([a-z])$/.exec(key);
  if (control) return String.fromCharCode(control[1]!.charCodeAt(0) - 96);
  const cursor = CURSOR_KEYS[key];
  if (cursor) return `${applicationCursor ? SS3 : CSI}${cursor}`;
  const bytes = KEY_BYTES[key];
  if (bytes === undefined) throw new CodedError('UNKNOWN_KEY', `"${key}" is not a key type() knows. Valid keys: ${VALID_KEYS_DESCRIPTION}.`, { details: { key } });
  return bytes;
}
