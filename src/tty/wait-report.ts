import { renderNewOutput, renderScreen } from '../observe/render-new-output.js';
import { type Persistence } from './persistence.js';
import { closeTty } from './open-close.js';
import { syncAll } from './terminal-sync.js';
import type { Tty } from './tty.js';
import type { TtyContext } from './tty-context.js';
import type { TtyReport, WaitReason, WaitResult } from './types.js';

/**
 * What wait() returns: every terminal with something the agent has not seen (new lines,
 * the whole screen of a full-screen program, a command's end, the process's end), which is
 * then marked seen; terminals whose process ended are closed and archived.
 */
export async function reportChanges(ctx: TtyContext, persistence: Persistence, reason: WaitReason, started: number, signal?: AbortSignal): Promise<WaitResult> {
  const states = await syncAll(ctx);
  signal?.throwIfAborted();
  const changed: TtyReport[] = [];
  const closing: Tty[] = [];
  for (const tty of ctx.ttys.all()) {
    const newEnd = tty.commandEnds > tty.reportedEnds ? tty.lastEnd : undefined;
    if (!tty.hasUnseen() && !newEnd && tty.alive) {
      tty.settled();
      continue;
    }
    const item = reportOf(tty, newEnd);
    if (!tty.alive) closing.push(tty);
    changed.push(item);
    tty.reported(states.find((s) => s.id === tty.id));
    await tty.files.flush();
  }
  for (const tty of closing) {
    const item = changed.find((c) => c.tty === tty.number);
    const archivedTo = await closeTty(ctx, persistence, tty);
    if (item) item.archivedTo = archivedTo;
  }
  await persistence.saveState();
  return {
    reason,
    elapsedMs: Date.now() - started,
    changed,
    open: ctx.ttys.all().map((t) => ({ tty: t.number, program: t.program, alive: t.alive })),
  };
}

/** One terminal's news as the agent reads it. */
function reportOf(tty: Tty, newEnd: Tty['lastEnd']): TtyReport {
  const fullScreen = tty.emulator.alternateScreen && tty.alive;
  const files = { scrollback: tty.files.scrollback, screen: tty.files.screen };
  let text: string;
  let totalLines: number;
  let elidedLines = 0;
  if (fullScreen) {
    text = renderScreen(tty.emulator.screenText());
    totalLines = text ? text.split('\n').length : 0;
  } else {
    tty.emulator.flushRowsAbove();
    ({ text, totalLines, elidedLines } = renderNewOutput(tty.tracker.collect(tty.emulator), `${files.scrollback} (then ${files.screen})`));
  }
  const item: TtyReport = { tty: tty.number, program: tty.program, alive: tty.alive, fullScreen, text, totalLines, elidedLines, files };
  if (!tty.alive) {
    if (tty.exitCode !== undefined) item.exitCode = tty.exitCode;
  } else if (newEnd?.durationMs !== undefined) {
    if (newEnd.exitCode !== undefined) item.exitCode = newEnd.exitCode;
    item.durationMs = newEnd.durationMs;
  }
  return item;
}
