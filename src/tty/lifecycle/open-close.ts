import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { CodedError, describeError } from '../../errors.js';
import { ARCHIVE, freshTickFile, pruneOldTicks } from '../../observe/tick-files.js';
import { TTY_STATUS_FILE } from '../../state/tty-status-file.js';
import { createTty } from './new-tty.js';
import type { Persistence } from './persistence.js';
import { type EndedProcess, endTerminalProcesses, terminalMarker } from '../probe/process-tree.js';
import { normalizeProgram } from '../probe/program-name.js';
import { STATUS_KEY_VARIABLE, commandLine, integratedShellCommand } from '../screen/shell-integration.js';
import type { Tty } from '../terminal/tty.js';
import { type TtyContext, agentPath } from '../terminal/tty-context.js';
import type { OpenResult, UntilSpec } from '../api/types.js';
import { compileUntil } from '../terminal/until.js';
import { ttyCapacity, ttyOutOfRange } from '../api/tty-errors.js';

/** Cap of all archived terminals of an instance (`<logs>/sessions`): the oldest ticks' go first. */
const ARCHIVES_TOTAL_BYTES = 1024 ** 3;

export interface OpenOptions {
  /** Run this shell command line instead of the integrated bash. */
  command?: string;
  /** This number instead of the lowest free one. */
  tty?: number;
  /** The working directory inside the sandbox (default: the data directory). */
  cwd?: string;
  /** For a program the kernel cannot judge: waits on this terminal end when its prompt or regex shows. */
  until?: UntilSpec;
}

/**
 * Open a terminal: the integrated bash, or `command`; on the lowest free number, or on
 * `tty`; in `cwd` (inside the sandbox; relative to the data directory, which is the default).
 */
export async function openTty(ctx: TtyContext, persistence: Persistence, options: OpenOptions): Promise<OpenResult> {
  const command = options.command?.trim();
  const until = options.until && compileUntil(options.until);
  const number = options.tty === undefined ? lowestFree(ctx) : freeNumber(ctx, options.tty);
  const cwd = await workingDirectory(ctx, options.cwd);
  const display = command || ctx.config.shell;
  const statusKey = randomBytes(8).toString('hex');
  const shellLine = command ? commandLine(command, statusKey) : integratedShellCommand(ctx.config.shell, ctx.rcfile);
  const { cols, rows } = ctx.config;
  const [markerName, markerValue] = terminalMarker(ctx.instance.name, number).split('=') as [string, string];
  const env = { AGENT_KERNEL_TTY: String(number), [markerName]: markerValue, ...(command ? {} : { [STATUS_KEY_VARIABLE]: statusKey }) };
  const id = await ctx.host.open({ number, shellLine, cwd, env, cols, rows });
  // A new terminal's directory starts empty (old files belong to an earlier terminal with the same number).
  await clearFiles(ctx.paths.tty(number));
  const tty = await createTty(ctx, { number, command: display, id, openedAt: new Date().toISOString(), cols, rows, statusKey }, 0, 0);
  tty.named(normalizeProgram(display.split(/\s+/)[0] ?? display));
  // Our shell, started now with this rcfile, signs its marks from the first prompt.
  if (!command) tty.commands.signs();
  tty.until = until;
  tty.tracker.markSeen(tty.emulator);
  tty.acted('open', !command);
  ctx.ttys.add(tty);
  await persistence.saveState();
  await persistence.writeRegistry();
  void tty.files.flush();
  ctx.logger.info({ tty: number, command: display }, 'terminal opened');
  ctx.events.opened.fire({ tty: number, command: display });
  return { tty: number, command: display, capacity: capacity(ctx) };
}

export function capacity(ctx: TtyContext): OpenResult['capacity'] {
  return { used: ctx.ttys.size, max: ctx.config.max_ttys };
}

/**
 * End every process of a terminal (also those that left its session with setsid), remove it
 * from the host and archive its scrollback; resolves with the archive's path and what was ended.
 */
export async function closeTty(ctx: TtyContext, persistence: Persistence, tty: Tty): Promise<{ archivedTo: string; ended: EndedProcess[] }> {
  // A dead terminal's first pid may belong to someone else by now: then only its marker counts.
  const pid = tty.alive ? (tty.state?.pid ?? (await ctx.host.terminals()).find((t) => t.id === tty.id)?.pid) : undefined;
  const ended = await endTerminalProcesses(ctx.sandbox, pid || undefined, terminalMarker(ctx.instance.name, tty.number)).catch((error: unknown) => {
    ctx.logger.warn({ tty: tty.number, error: describeError(error) }, 'ending the terminal processes failed');
    return [];
  });
  await ctx.host.kill(tty.id);
  ctx.ttys.remove(tty);
  await tty.emulator.drain();
  tty.emulator.flushRowsAbove();
  const finalRows = tty.emulator.readRows(tty.emulator.flushedAbs, tty.emulator.contentEndAbs());
  // A number closed twice in a tick gets a second archive, not the first one written over.
  const archivedTo = freshTickFile(ARCHIVE, ctx.paths.sessionArchive, tty.number, ctx.tick());
  await tty.files.archive(archivedTo, finalRows);
  await pruneOldTicks(ARCHIVE, ctx.paths.sessionArchive, ARCHIVES_TOTAL_BYTES, ctx.tick());
  tty.emulator.dispose();
  await persistence.saveState();
  await persistence.writeRegistry();
  ctx.logger.info({ tty: tty.number, archivedTo, ended }, 'terminal closed');
  ctx.events.closed.fire({ tty: tty.number, archivedTo });
  return { archivedTo: agentPath(ctx, archivedTo), ended };
}

function lowestFree(ctx: TtyContext): number {
  const max = ctx.config.max_ttys;
  for (let n = 0; n < max; n++) if (!ctx.ttys.has(n)) return n;
  throw ttyCapacity(max);
}

function freeNumber(ctx: TtyContext, number: number): number {
  const max = ctx.config.max_ttys;
  if (!Number.isInteger(number) || number < 0 || number >= max) {
    throw ttyOutOfRange(number, max);
  }
  if (ctx.ttys.has(number)) {
    throw new CodedError('TTY_IN_USE', `TTY ${number} is already open. Use it, close it with close(${number}) first, or open another number.`, {
      details: { tty: number },
    });
  }
  return number;
}

/** An absolute directory that exists in the sandbox (a relative one is under the data directory). */
async function workingDirectory(ctx: TtyContext, cwd: string | undefined): Promise<string> {
  const { dataDir } = ctx.instance;
  if (cwd === undefined || cwd.trim() === '') return dataDir;
  const dir = path.posix.resolve(dataDir, cwd);
  const found = await ctx.sandbox.run(['test', '-d', dir], { timeoutMs: 10_000 }).catch(() => undefined);
  if (found?.exitCode !== 0) {
    throw new CodedError('USAGE', `The working directory ${dir} does not exist in ${ctx.sandbox.description}. Create it, or name another cwd.`, {
      details: { cwd: dir },
    });
  }
  return dir;
}

async function clearFiles(dir: string): Promise<void> {
  for (const name of ['scrollback', 'screen', 'screen.ansi', 'raw', 'raw.1', TTY_STATUS_FILE]) await rm(path.join(dir, name), { force: true });
}
