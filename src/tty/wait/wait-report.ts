import { renderNewOutput, renderScreen } from '../../observe/render-new-output.js';
import { type Persistence } from '../lifecycle/persistence.js';
import { describeLocation, locateLines } from '../seen/elision-pointer.js';
import { closeTty } from '../lifecycle/open-close.js';
import { readProcessTable } from '../probe/process-table.js';
import { terminalProcesses } from '../probe/process-tree.js';
import { isShell } from '../probe/program-name.js';
import { syncAll } from '../terminal/terminal-sync.js';
import type { GoneRows } from '../seen/relocation.js';
import type { CommandEnd } from '../terminal/shell-commands.js';
import type { Tty } from '../terminal/tty.js';
import { type TtyContext, agentPath } from '../terminal/tty-context.js';
import type { TtyReport, WaitResult } from '../api/types.js';
import type { Judgement } from './wait-judge.js';

/**
 * What wait() returns: every terminal with something the agent has not seen (new lines,
 * the whole screen of a full-screen program, a command's end, the process's end), which is
 * then marked seen; terminals whose process ended are closed and archived. With `observe`
 * the same report, and nothing changes (an observing session must not take the agent's news).
 */
export async function reportChanges(
  ctx: TtyContext,
  persistence: Persistence,
  judgement: Judgement,
  started: number,
  options: { signal?: AbortSignal | undefined; deliveryId?: string | undefined; observe?: boolean } = {},
): Promise<WaitResult> {
  const { signal, deliveryId, observe = false } = options;
  await syncAll(ctx);
  signal?.throwIfAborted();
  const changed: TtyReport[] = [];
  const closing: Tty[] = [];
  const background: Array<[Tty, TtyReport]> = [];
  for (const tty of ctx.ttys.all()) {
    const newEnd = tty.commands.ends > tty.commands.reportedEnds ? tty.commands.lastEnd : undefined;
    if (!tty.hasUnseen() && !newEnd && tty.alive) {
      if (!observe) tty.actions.settled();
      continue;
    }
    const item = reportOf(ctx, tty, newEnd, observe);
    changed.push(item);
    if (observe) continue;
    if (!tty.alive) closing.push(tty);
    else if (tty.emulator.backgroundJobs > 0 && isShell(tty.program) && !tty.commands.running) background.push([tty, item]);
    else if (newEnd) tty.runsInBackground([]);
    tty.reported(deliveryId);
    await tty.files.flush();
  }
  const before = ctx.ttys.all().map((t) => t.background.join());
  if (background.length > 0) await nameBackground(ctx, background);
  // The runner's pre-stop check reads them from the registry.
  if (ctx.ttys.all().some((t, i) => t.background.join() !== before[i])) await persistence.writeRegistry();
  for (const tty of closing) {
    const item = changed.find((c) => c.tty === tty.number);
    const { archivedTo } = await closeTty(ctx, persistence, tty);
    if (item) item.archivedTo = archivedTo;
  }
  if (!observe) await persistence.saveState();
  return {
    reason: judgement.reason,
    ...(judgement.input ? { input: judgement.input } : {}),
    ...(judgement.matched ? { matched: judgement.matched } : {}),
    elapsedMs: Date.now() - started,
    changed,
    open: ctx.ttys.all().map((t) => ({ tty: t.number, program: t.program, alive: t.alive })),
  };
}

/** An idle shell with jobs still running: say which, briefly, below its new lines. */
async function nameBackground(ctx: TtyContext, reports: ReadonlyArray<[Tty, TtyReport]>): Promise<void> {
  const table = await readProcessTable(ctx.sandbox);
  if (!table) return;
  for (const [tty, item] of reports) {
    const shell = tty.state?.pid;
    if (!shell) continue;
    // At an idle prompt the foreground group is the shell's own: its prompt subshells are not jobs, jobs have groups of their own.
    const foreground = table.find((p) => p.pid === shell)?.tpgid;
    const running = terminalProcesses(table, shell, new Set()).filter((p) => p.pid !== shell && p.pgid !== foreground);
    tty.runsInBackground(running.map((p) => `${p.name} (pid ${p.pid}, ${Math.round(p.rssKb / 1024)} MB)`));
    if (running.length === 0) continue;
    const named = tty.background.slice(0, 3);
    const more = running.length > named.length ? ` and ${running.length - named.length} more` : '';
    item.text += `${item.text ? '\n' : ''}… still running in the background: ${named.join(', ')}${more} …`;
  }
}

/** The server died while a reply was on its way: its lines come again, labelled. */
export function possiblyRepeatedNote(lines: number): string {
  return `… possibly repeated: the first ${lines} line${lines === 1 ? '' : 's'} below may already have reached you (the server restarted while a reply was on its way) …`;
}

/** Lines tmux trimmed from its history while no server was attached, before anyone saw them. */
export function goneNote(gone: GoneRows): string {
  const lines = (n: number) => `${n.toLocaleString('en-US')} line${n === 1 ? '' : 's'}`;
  const kept = `tmux keeps the last ${gone.limit.toLocaleString('en-US')} (tty.history_limit); what follows is what it kept`;
  const maybe = gone.maybeSeen > 0 ? `, and so are the ${lines(gone.maybeSeen)} before them that a reply sent just before the server stopped may have shown you` : '';
  if (gone.rows === 0) return `… ${lines(gone.maybeSeen)} that a reply sent just before the server stopped may have shown you ${gone.maybeSeen === 1 ? 'is' : 'are'} gone: ${kept} …`;
  return `… ${gone.atLeast ? 'at least ' : ''}${lines(gone.rows)} printed while no server was attached ${gone.rows === 1 && !gone.atLeast ? 'is' : 'are'} gone${maybe}: ${kept} …`;
}

/** The prompt line each shell terminal showed the agent last. */
const shownPrompts = new WeakMap<Tty, string>();

/**
 * A finished command's output without the shell's prompt line after it when the agent saw
 * that same prompt last time (the header says the command finished; a new directory or
 * user changes the prompt, and then it is shown).
 */
function withoutRepeatedPrompt(tty: Tty, text: string, observe: boolean): string {
  const lines = text.split('\n');
  const prompt = lines.at(-1)?.trimEnd() ?? '';
  if (prompt === '') return text;
  if (shownPrompts.get(tty) !== prompt) {
    // What an observer was shown is not what the agent was shown.
    if (!observe) shownPrompts.set(tty, prompt);
    return text;
  }
  lines.pop();
  while (lines.length > 0 && lines.at(-1)?.trim() === '') lines.pop();
  return lines.join('\n');
}

/** One terminal's news as the agent reads it. */
function reportOf(ctx: TtyContext, tty: Tty, newEnd: CommandEnd | undefined, observe: boolean): TtyReport {
  // A full-screen program, or one that redrew the normal screen in place (top): the screen is the news.
  const fullScreen = (tty.emulator.alternateScreen || tty.tracker.redrawnInPlace(tty.emulator)) && tty.alive;
  const files = { scrollback: agentPath(ctx, tty.files.scrollback), screen: agentPath(ctx, tty.files.screen) };
  let text: string;
  let totalLines: number;
  let elidedLines = 0;
  if (fullScreen) {
    text = renderScreen(tty.emulator.screenText());
    totalLines = text ? text.split('\n').length : 0;
  } else {
    tty.emulator.flushRowsAbove();
    const output = tty.tracker.collect(tty.emulator);
    const recording = ctx.recordingOf?.(tty.number);
    const replay = recording ? `; replay with timing: ${agentPath(ctx, recording)}` : '';
    const where = (first: number, last: number): string => {
      const [from, to] = output.rawRange?.(first, last) ?? [first, last];
      const ranges = locateLines(tty, from, to, (file) => agentPath(ctx, file));
      return `${ranges?.length ? describeLocation(ranges) : `the full text is in ${files.scrollback} (then ${files.screen})`}${replay}`;
    };
    ({ text, totalLines, elidedLines } = renderNewOutput(output, where));
    if (newEnd && isShell(tty.program) && !tty.commands.running) text = withoutRepeatedPrompt(tty, text, observe);
    const repeated = Math.min(totalLines, tty.marks.possiblyRepeatedRows(tty.tracker.markAbs));
    if (repeated > 0) text = `${possiblyRepeatedNote(repeated)}\n${text}`;
    if (tty.marks.gone) text = `${goneNote(tty.marks.gone)}\n${text}`;
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
