/**
 * C0 controls but tab and newline, DEL and C1 controls: bytes an operator's terminal acts on
 * (moving the cursor, setting the title or clipboard with OSC, answering queries).
 */
// eslint-disable-next-line no-control-regex -- matching them is the point
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text the agent may have written, made safe for a person's terminal: each control character
 * becomes a visible `\u001b`-style escape. In JSON text it is the same value, so `--json`
 * output and log lines stay valid and mean the same.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
