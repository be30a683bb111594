import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The operator's view of an instance's terminals, read from the per-TTY `status` files
 * the terminal layer keeps in `<state>/sessions/tty_N/` (so it works while a server
 * runs, without taking its lock).
 */
export interface TtyStatusRow {
  tty: number;
  program: string;
  command: string;
  state: string;
  /** A line count when the terminal layer records one, else whether anything is unseen. */
  unseen: number | boolean;
  lastActivity: string;
}

interface StatusFile {
  tty?: unknown;
  command?: unknown;
  program?: unknown;
  alive?: unknown;
  exitCode?: unknown;
  lastActivity?: unknown;
  unseen?: unknown;
  unseenLines?: unknown;
}

/** Pure: one status file's JSON → a row (undefined when it is not a status file). */
export function statusRow(tty: number, json: unknown): TtyStatusRow | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const s = json as StatusFile;
  const exitCode = typeof s.exitCode === 'number' ? s.exitCode : undefined;
  return {
    tty: typeof s.tty === 'number' ? s.tty : tty,
    program: typeof s.program === 'string' ? s.program : '?',
    command: typeof s.command === 'string' ? s.command : '?',
    state: s.alive === false ? `exited${exitCode === undefined ? '' : ` (${exitCode})`}` : 'running',
    unseen: typeof s.unseenLines === 'number' ? s.unseenLines : s.unseen === true,
    lastActivity: typeof s.lastActivity === 'string' ? s.lastActivity : '',
  };
}

export async function readTtyStatuses(sessionsDir: string): Promise<TtyStatusRow[]> {
  let names: string[];
  try {
    names = await readdir(sessionsDir);
  } catch {
    return [];
  }
  const rows: TtyStatusRow[] = [];
  for (const name of names) {
    const match = /^tty_(\d+)$/.exec(name);
    if (!match) continue;
    const tty = Number(match[1]);
    const dir = path.join(sessionsDir, name);
    let row: TtyStatusRow | undefined;
    try {
      row = statusRow(tty, JSON.parse(await readFile(path.join(dir, 'status'), 'utf8')));
    } catch {
      // No status: a terminal lost to a container restart keeps only scrollback.prev.
      const files = await readdir(dir).catch(() => [] as string[]);
      if (files.includes('scrollback.prev')) row = { tty, program: '-', command: '-', state: 'lost', unseen: false, lastActivity: '' };
    }
    if (row) rows.push(row);
  }
  return rows.sort((a, b) => a.tty - b.tty);
}

/** Pure: the table `agent-kernel ls` prints. */
export function formatTtyTable(rows: readonly TtyStatusRow[]): string {
  if (rows.length === 0) return 'No terminals. (The agent opens them with login() and open().)';
  const table = [
    ['TTY', 'PROGRAM', 'STATE', 'UNSEEN', 'LAST ACTIVITY', 'COMMAND'],
    ...rows.map((r) => [
      String(r.tty),
      r.program,
      r.state,
      typeof r.unseen === 'number' ? String(r.unseen) : r.unseen ? 'yes' : '-',
      r.lastActivity.replace(/\.\d+Z$/, 'Z'),
      r.command.length > 50 ? `${r.command.slice(0, 47)}...` : r.command,
    ]),
  ];
  const widths = table[0]?.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length))) ?? [];
  return table.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}
