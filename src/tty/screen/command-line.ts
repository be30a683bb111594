import type { TtyEmulator } from './tty-emulator.js';

const MAX_COMMAND_CHARS = 1000;

/**
 * The command line a shell just started (mark C), read off the screen: from where the
 * prompt ended (mark B) to the cursor. Wrapped rows join without a break.
 */
export function typedCommandLine(emulator: TtyEmulator, from: { abs: number; x: number } | undefined): string {
  if (!from || emulator.alternateScreen) return '';
  const end = emulator.cursorX > 0 ? emulator.cursorAbs + 1 : emulator.cursorAbs;
  const rows = emulator.readRows(from.abs, Math.max(end, from.abs + 1));
  let text = '';
  for (const [i, row] of rows.entries()) {
    const part = row.abs === from.abs ? row.text.slice(from.x) : row.text;
    text += i === 0 || row.wrapped ? part : `\n${part}`;
  }
  text = text.trim();
  return text.length > MAX_COMMAND_CHARS ? `${text.slice(0, MAX_COMMAND_CHARS)}…` : text;
}
