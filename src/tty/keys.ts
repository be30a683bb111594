import { KernelError } from '../errors.js';

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
    throw new KernelError('UNKNOWN_KEY', `"${text}" is not a key type() knows. Valid keys: ${VALID_KEYS_DESCRIPTION}. To send it as literal text, add a space or use enter: true with the words you mean.`, {
      details: { text, validKeys: [...VALID_KEYS] },
    });
  }
  const body = text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text;
  if (/[\r\n]/.test(body)) return { kind: 'paste', text: body.replace(/\r\n/g, '\n') };
  return { kind: 'text', text: body };
}
