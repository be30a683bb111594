import { onlyEcho } from '../../observe/echo.js';
import { promptOnly } from '../../observe/echo-filter.js';
import { promptText } from '../probe/input-wait.js';
import type { Tty } from '../terminal/tty.js';

/**
 * What type() must not act past: news the agent has not seen, in a few words for the refusal
 * (`what`); or, for a change that is news only if the program now asks for input (progress
 * streaming elsewhere, a line rewritten in place here), `ifAsking`.
 */
export type News = { what: string } | { ifAsking: true };

/**
 * Observe before act, on the terminal the agent types into: refused for what it has not
 * seen of its last action (a finished command, an ended program, new lines beyond the echo
 * of what it typed, the screen its keys changed) and for new lines. Not refused for what a
 * program changed by itself after the agent looked: a full-screen program's redraws (top,
 * watch, a clock) and a line rewritten in place (a progress bar, a spinner) are state, and
 * the agent acts on the state it saw; such a line counts only once the program asks for input.
 */
export function ownNews(tty: Tty): News | undefined {
  const ended = endNews(tty);
  if (ended || !tty.hasUnseen()) return ended;
  const kind = tty.tracker.changeKind(tty.emulator);
  if (kind === 'none') return tty.marks.gone ? { what: 'lines printed while no server was attached are gone' } : undefined;
  if (kind === 'screen') return tty.actions.actedSinceLook ? { what: screenNews(tty) } : undefined;
  const output = tty.tracker.collect(tty.emulator);
  if (output.all && onlyEcho(output.all, tty.tracker.markPrefix, tty.actions.sent)) return undefined;
  // The echo of its own lines left out, a continuation prompt (`>` of a heredoc sent in parts) asks for what it sends next.
  if (output.all && tty.actions.sent.length > 0 && output.all.every(promptOnly)) return undefined;
  if (output.all && onlyNewPrompt(tty, output.all)) return undefined;
  if (!tty.actions.actedSinceLook && tty.tracker.onlyMarkRowChanged(tty.emulator)) return { ifAsking: true };
  return { what: linesNews(tty, output) };
}

/**
 * On another terminal only what changes what to do next counts: its command finished, its
 * program ended, or it now asks for input; streaming output or a redrawing screen does not.
 */
export function otherNews(tty: Tty): News | undefined {
  const ended = endNews(tty);
  if (ended || !tty.hasUnseen()) return ended;
  if (!tty.alive || (tty.tracker.changeKind(tty.emulator) === 'screen' && !tty.actions.actedSinceLook)) return undefined;
  return { ifAsking: true };
}

/** The news of a terminal whose program asks for input: which program, at which prompt. */
export function askingNews(tty: Tty): string {
  const emulator = tty.emulator;
  const row = emulator.readRows(emulator.cursorAbs, emulator.cursorAbs + 1)[0]?.text ?? '';
  const prompt = emulator.alternateScreen ? '' : promptText(row, emulator.cursorX);
  return `${tty.program || 'its program'} asks for input${prompt ? ` at ${quote(prompt)}` : ''}`;
}

function endNews(tty: Tty): News | undefined {
  if (!tty.hasUnseen() && tty.commands.ends <= tty.commands.reportedEnds) return undefined;
  if (!tty.alive) return { what: `its program ended${tty.exitCode === undefined ? '' : ` with exit code ${tty.exitCode}`}` };
  // A prompt with no command before it (a new shell's first, an empty Enter): nothing finished.
  if (tty.commands.ends > tty.commands.reportedEnds && tty.commands.lastEnd?.durationMs !== undefined) {
    const code = tty.commands.lastEnd.exitCode;
    return { what: `a command finished${code === undefined ? '' : ` with exit code ${code}`}` };
  }
  return undefined;
}

/**
 * The new lines are only a prompt the shell drew with no command before it (a new terminal's
 * first prompt): the agent knows a shell waits there, and types at it.
 */
function onlyNewPrompt(tty: Tty, lines: readonly string[]): boolean {
  if (tty.commands.ends <= tty.commands.reportedEnds || tty.commands.lastEnd?.durationMs !== undefined) return false;
  const written = lines.filter((line) => line.trim() !== '');
  if (written.length > 1) return false;
  const emulator = tty.emulator;
  const cursorRow = emulator.readRows(emulator.cursorAbs, emulator.cursorAbs + 1)[0]?.text ?? '';
  return written.length === 0 || written[0]!.trim() === cursorRow.trim();
}

function screenNews(tty: Tty): string {
  return tty.actions.sent.length === 0 ? 'its screen since you opened it' : `the screen ${tty.program || 'its program'} drew after your keys`;
}

function linesNews(tty: Tty, output: ReturnType<Tty['tracker']['collect']>): string {
  const last = [...output.tail].reverse().find((line) => line.trim() !== '');
  return newLinesNews(output.total, last, tty.actions.sent.length === 0 && tty.actions.actedSinceLook);
}

/** Pure: "a new line: `x`", "12 new lines since you opened it, the last `x`" (`last`: the last line that is not blank). */
export function newLinesNews(total: number, last: string | undefined, sinceOpened = false): string {
  const opened = sinceOpened ? ' since you opened it' : '';
  if (total === 1) return `a new line${opened}${last ? `: ${quote(last.trim())}` : ''}`;
  return `${total} new lines${opened}${last ? `, the last ${quote(last.trim())}` : ''}`;
}

function quote(text: string): string {
  const short = text.length > 60 ? `${text.slice(0, 59)}…` : text;
  return `\`${short.replace(/`/g, "'")}\``;
}
