import { type TtyState, loadSeenState } from '../seen/seen-store.js';
import { keepLostScrollback } from '../../observe/tty-files.js';
import { createTty } from './new-tty.js';
import { checkAnchor, mayHaveTrimmed, relocate } from '../seen/relocation.js';
import { isShell, normalizeProgram } from '../probe/program-name.js';
import { parseShellTitle } from '../screen/shell-integration.js';
import type { TerminalSnapshot, TerminalState } from '../host/terminal-host.js';
import { type Tty, normalCursor } from '../terminal/tty.js';
import { type TtyContext, agentPath } from '../terminal/tty-context.js';
import { type AdoptReport, type LostTty, MAX_TTYS } from '../api/types.js';
import { type UntilPattern, compileUntil } from '../terminal/until.js';
import type { UntilSpec } from '../api/types.js';

/** Rows captured above the first one needed at re-adoption: what a terminal may print between being listed and captured. */
const ADOPT_SLACK_ROWS = 200;

/**
 * At start: re-attach every terminal the host still has (those the saved state knows, and
 * windows it does not: a server killed between opening and saving), and report the ones the
 * state knew that are gone (the container restarted).
 */
export async function adoptAll(ctx: TtyContext): Promise<AdoptReport> {
  const saved = await loadSeenState(ctx.paths.privateState);
  const live = await ctx.host.terminals();
  const lost: LostTty[] = [];
  const adopted: number[] = [];
  const adopting: Array<Promise<void>> = [];
  for (const state of saved.ttys) {
    const found = live.find((t) => t.number === state.tty && t.id === state.paneId);
    if (!found) {
      lost.push(await recordLost(ctx, state));
      continue;
    }
    adopting.push(adopt(ctx, state, found));
    adopted.push(state.tty);
  }
  for (const terminal of live) {
    if (terminal.number >= MAX_TTYS || adopted.includes(terminal.number)) continue;
    adopting.push(adopt(ctx, undefined, terminal));
    adopted.push(terminal.number);
  }
  // All at once: the host's round trips overlap, and so does the emulators' parsing.
  await Promise.all(adopting);
  return { adopted: adopted.sort((a, b) => a - b), lost, persistent: ctx.host.persistent };
}

async function recordLost(ctx: TtyContext, state: TtyState): Promise<LostTty> {
  const scrollbackPrev = await keepLostScrollback(ctx.paths.tty(state.tty));
  ctx.logger.warn({ tty: state.tty }, 'terminal lost (its host is gone)');
  return { tty: state.tty, command: state.command, scrollbackPrev: agentPath(ctx, scrollbackPrev) };
}

/** Re-attach a live terminal: seed an emulator from the host's history and work out what the agent has not seen. */
async function adopt(ctx: TtyContext, before: TtyState | undefined, terminal: TerminalState): Promise<void> {
  // tmux may have trimmed its history meanwhile: then every saved row moved up (found in the whole history).
  const check = before && (await checkAnchor(ctx.host, terminal.id, before));
  const limit = check?.limit ?? ctx.config.history_limit;
  let relocating = check?.moved === true;
  // tmux counts the start of a capture up from the screen at the capture's instant, and the terminal
  // may have printed more since it was listed: capture with some slack, and again if that was not enough
  // (the capture's own instant tells which row it began with), the last time the whole history.
  let history = terminal.historySize;
  let from: number | undefined;
  let snapshot: TerminalSnapshot | undefined;
  for (let attempt = 0; ; attempt++) {
    // Only the rows still needed: what the agent has not seen and what the scrollback file
    // lacks (often just the screen). Older history stays in the host and in the file; parsing
    // it again made re-adopting 20 long terminals cost a second of CPU.
    const wanted = relocating ? 0 : Math.max(0, Math.min(before?.markRow ?? 0, before?.scrollbackRows ?? 0, terminal.historySize));
    from = wanted === 0 || attempt >= 2 ? undefined : wanted - history - ADOPT_SLACK_ROWS;
    // Output up to the snapshot is in it; output after it is kept and replayed when the terminal is added.
    snapshot = await ctx.host.snapshot(terminal, from, () => ctx.ttys.forgetEarly(terminal.id), { plainRows: relocating });
    history = snapshot.state.historySize;
    // tmux trimmed between the check and the capture, or its history shrank otherwise: the saved rows
    // moved after all (taking every row of the history as unseen instead showed thousands again, unlabelled).
    if (before?.anchor && !relocating && (mayHaveTrimmed(history, limit) || history < before.markHistory)) {
      relocating = true;
      continue;
    }
    if (from === undefined || Math.max(0, history + from) <= wanted) break;
  }
  const now = snapshot.state;
  const relocated = before && relocating && snapshot.plainRows ? relocate(before, snapshot.plainRows, now.historySize, limit) : undefined;
  if (relocated && relocated.found !== 'trimmed') ctx.logger.warn({ tty: terminal.number, found: relocated.found, gone: relocated.gone }, 'the saved rows were not where tmux trims leave them');
  const saved = relocated?.state ?? before;
  const markRow = saved ? (now.historySize < saved.markHistory ? 0 : saved.markRow) : 0;
  const identity = {
    number: terminal.number,
    command: saved?.command ?? '(adopted)',
    id: terminal.id,
    openedAt: saved?.openedAt ?? new Date().toISOString(),
    statusKey: saved?.statusKey,
    cols: now.cols,
    rows: now.rows,
  };
  const tty = await createTty(ctx, identity, markRow, saved?.scrollbackRows ?? 0);
  if (saved?.signsMarks) tty.commands.signs();
  const emulator = tty.emulator;
  // The first captured row, in the host's numbering (the state above is from the same instant).
  emulator.setTotalScrolls(from === undefined ? 0 : Math.max(0, now.historySize + from));
  if (snapshot.fullScreen) {
    emulator.write([...snapshot.rows, ...padRows(snapshot.fullScreen.normalScreen, now.rows)].join('\r\n'));
    emulator.write(`\x1b[${now.alternateSavedY + 1};${now.alternateSavedX + 1}H\x1b[?1049h\x1b[H\x1b[2J`);
    emulator.write(padRows(snapshot.fullScreen.screen, now.rows).join('\r\n'));
  } else {
    // -J joins wrapped rows; the emulator wraps them again at the same width, row for row.
    emulator.write(snapshot.rows.join('\r\n'));
  }
  emulator.write(`\x1b[${now.cursorY + 1};${now.cursorX + 1}H`);
  await emulator.drain();
  if (emulator.totalScrolls !== now.historySize) {
    ctx.logger.debug({ tty: tty.number, emulator: emulator.totalScrolls, host: now.historySize }, 'seeded history differs from the host; using its numbering');
    emulator.setTotalScrolls(now.historySize);
  }
  tty.observed(now, normalizeProgram(now.command));
  if (now.dead) tty.died(now.exitStatus);
  else if (saved?.commandStartedAt !== undefined) resumeOrEnd(tty, saved.commandStartedAt, now);
  if (!now.dead) tty.commands.adoptedAtPrompt(tty.emulator);
  const changed = !saved || tty.digest(normalCursor(now)) !== saved.markDigest || now.historySize < saved.markHistory;
  tty.tracker.adopted(emulator, changed);
  const shown = saved?.shown && now.historySize >= saved.shown.history ? saved.shown : undefined;
  tty.marks.restore({ row: markRow, history: saved?.markHistory ?? 0, digest: saved?.markDigest ?? '' }, shown, saved?.gone, relocated?.gone);
  if (relocated?.gone) ctx.logger.warn({ tty: tty.number, ...relocated.gone }, 'rows printed while no server was attached were trimmed by tmux before anyone saw them');
  if (saved?.until) tty.until = compileSaved(saved.until);
  ctx.ttys.add(tty);
  // Soon, not now: writing 20 screens must not hold up the login that awaits adoption.
  tty.files.schedule();
}

/**
 * A command an earlier server saw start: its end mark went to no one if it ended meanwhile. The
 * shell's title tells (a prompt after the start: it ended, with this status); without the
 * title (a program set its own), a program other than the shell in the foreground still runs it.
 */
function resumeOrEnd(tty: Tty, startedAt: number, now: TerminalState): void {
  const end = parseShellTitle(now.title ?? '', tty.statusKey);
  if (end && end.endedAt >= startedAt) tty.commands.endedUnseen(startedAt, end);
  else if (end || !isShell(normalizeProgram(now.command))) tty.commands.resume(startedAt);
}

/** A pattern saved by an earlier server; one that no longer compiles is dropped. */
function compileSaved(spec: UntilSpec): UntilPattern | undefined {
  try {
    return compileUntil(spec);
  } catch {
    return undefined;
  }
}

/** Exactly `count` rows, so that writing them scrolls the emulator as far as the host had scrolled. */
function padRows(lines: string[], count: number): string[] {
  const out = lines.slice(0, count);
  while (out.length < count) out.push('');
  return out;
}
