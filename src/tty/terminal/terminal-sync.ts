import { parseReadingKeys } from '../probe/completion.js';
import { foregroundName } from '../probe/input-wait.js';
import { foregroundOf, readProcessTable } from '../probe/process-table.js';
import { isShell, normalizeProgram } from '../probe/program-name.js';
import type { TerminalState } from '../host/terminal-host.js';
import type { Tty } from './tty.js';
import type { TtyContext } from './tty-context.js';

/** How long a dead terminal may lack its exit status before it is reported without one. */
const DEAD_STATUS_GRACE_MS = 2000;
/** How long a foreground program found in the process table is trusted. */
const FOREGROUND_CACHE_MS = 1000;

/**
 * Ask the host about every terminal, then let each emulator catch up: tmux sends a pane's
 * output before the reply to a later command, so afterwards the emulators hold exactly what
 * the host had at that instant. Updates each terminal's program and notices ended ones.
 */
export async function syncAll(ctx: TtyContext): Promise<TerminalState[]> {
  const began = Date.now();
  const ttys = ctx.ttys.all();
  // Each emulator's count of scrolled rows at the host's instant, to turn our rows into its rows.
  const scrolls = new Map<Tty, Promise<number>>();
  const states = await ctx.host.terminals(() => {
    for (const t of ttys) scrolls.set(t, t.emulator.checkpoint(() => t.emulator.totalScrolls));
  });
  await Promise.all(ttys.map((t) => t.emulator.drain()));
  await catchUp(ctx, ttys, states);
  for (const tty of ttys) {
    const state = states.find((s) => s.id === tty.id);
    if (!state) {
      tty.died(undefined);
      continue;
    }
    tty.observed(state, await foregroundProgram(ctx, tty, state), await scrolls.get(tty));
    const announced = tty.announcedExitStatus;
    if (announced !== undefined && tty.alive) {
      // Everything it printed came before the announcement: no need to wait for the pane to die.
      tty.died(announced);
      continue;
    }
    if (state.dead && tty.alive) {
      // tmux marks a pane dead when its pty closes and learns the exit status only when it reaps
      // the process, a moment later on a busy machine: give the status a little time to arrive.
      if (state.exitStatus === undefined && tty.awaitingExitStatus(Date.now(), DEAD_STATUS_GRACE_MS)) continue;
      await catchUpDeadTerminal(ctx, tty, state);
      tty.died(state.exitStatus);
    }
  }
  lastSync.set(ctx, began);
  return states;
}

const lastSync = new WeakMap<TtyContext, number>();
/** How long a sync waits for a terminal's bytes on their way before it judges without them. */
const CATCH_UP_MS = 3000;

/**
 * Where the host's reply can come before bytes it read earlier (tmux with pane pipes): a terminal
 * whose shell is back at its prompt by the host's word while we still know its command running
 * has its end mark on the way: without it, the wait would judge a quiet shell (settled) instead of
 * a finished command. Only those are waited for (a marker written to their terminal comes back).
 */
async function catchUp(ctx: TtyContext, ttys: readonly Tty[], states: readonly TerminalState[]): Promise<void> {
  const catchUpOn = ctx.host.catchUp;
  if (!catchUpOn) return;
  const behind = states.filter((s) => !s.dead && isShell(normalizeProgram(s.command)) && ttys.some((t) => t.id === s.id && t.commands.running));
  if (behind.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, CATCH_UP_MS)));
  await Promise.race([catchUpOn(behind).catch(() => {}), late]);
  clearTimeout(timer);
  await Promise.all(ttys.map((t) => t.emulator.drain()));
}

/** When the last full sync began (0: never): a wait right after a type need not ask the host again at once. */
export function lastSyncAt(ctx: TtyContext): number {
  return lastSync.get(ctx) ?? 0;
}

/**
 * The program in the foreground, as `expect` names it. The host names the process group
 * leader; in a pipeline (`seq 1 200 | less`) that is the first process, which may be gone:
 * the host then names the shell. While the shell says a command runs, ask the probe for the
 * group now (never cached: the leader it names may end a moment later), or the process
 * table when there is no probe (at most once a second).
 */
async function foregroundProgram(ctx: TtyContext, tty: Tty, state: TerminalState): Promise<string> {
  const named = normalizeProgram(state.command);
  if (!isShell(named) || !tty.commands.running || state.dead) return named;
  const probed = foregroundName(await ctx.inputWatch.foreground(state.pid));
  if (probed !== undefined) return normalizeProgram(probed);
  const now = Date.now();
  const cached = tty.cachedForeground(state.pid, now, FOREGROUND_CACHE_MS);
  if (cached !== undefined) return cached;
  const table = await readProcessTable(ctx.sandbox);
  const found = table && foregroundOf(table, state.pid);
  const name = found ? normalizeProgram(found.name) : named;
  tty.rememberForeground(state.pid, now, name);
  return name;
}

/** Is the terminal in non-canonical mode (a REPL or TUI reading keys)? undefined: cannot tell. */
export async function readsKeys(ctx: TtyContext, tty: Tty): Promise<boolean | undefined> {
  const device = tty.state?.device;
  if (!device) return undefined;
  const result = await ctx.sandbox.run(['stty', '-a', '-F', device], { timeoutMs: 5000 }).catch(() => undefined);
  return result && result.exitCode === 0 ? parseReadingKeys(result.stdout) : undefined;
}

/**
 * tmux drops output it had not yet sent to a control client when the pane's process
 * ends (the pane's fd closes), so a fast command's last lines may never arrive. tmux's own
 * screen has them: copy the rows from our cursor on from it.
 */
async function catchUpDeadTerminal(ctx: TtyContext, tty: Tty, state: TerminalState): Promise<void> {
  const emulator = tty.emulator;
  const hostCursor = state.historySize + state.cursorY;
  if (state.alternateOn || hostCursor < emulator.cursorAbs) return;
  const rows = await ctx.host.rowsFrom(state.id, emulator.cursorAbs - state.historySize);
  if (!rows) return;
  const known = emulator.readRows(emulator.cursorAbs, emulator.cursorAbs + 1)[0]?.text ?? '';
  const lines = rows.slice();
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length <= 1 && stripSgr(lines[0] ?? '').trimEnd() === known.trimEnd()) return;
  emulator.write(`\r\x1b[J${lines.join('\r\n')}\x1b[${state.cursorY + 1};${state.cursorX + 1}H`);
  await emulator.drain();
  ctx.logger.debug({ tty: tty.number, rows: lines.length }, 'caught up with a dead terminal from its host');
}

const ESC = String.fromCharCode(27);
const SGR = new RegExp(`${ESC}\\[[0-9;]*m`, 'g');

/** Text without colour escapes (capture-pane -e adds them). */
function stripSgr(text: string): string {
  return text.replace(SGR, '');
}
