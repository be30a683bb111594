import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { type TtyStatus, readTtyStatusFile } from '../state/tty-status-file.js';

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
  unseen: boolean;
  lastActivity: string;
}

/** Pure: one terminal's status → a row. */
export function statusRow(s: TtyStatus): TtyStatusRow {
  return {
    tty: s.tty,
    program: s.program,
    command: s.command,
    // A shell at its prompt is idle: "running" only while a command (or a program without shell marks) runs.
    state: s.alive ? (s.commandRunning === false ? 'idle' : 'running') : `exited${s.exitCode === undefined ? '' : ` (${s.exitCode})`}`,
    unseen: s.unseen,
    lastActivity: s.lastActivity,
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
    const status = await readTtyStatusFile(dir);
    if (status) {
      rows.push(statusRow(status));
      continue;
    }
    // No status: a terminal lost to a container restart keeps only scrollback.prev.
    const files = await readdir(dir).catch(() => [] as string[]);
    if (files.includes('scrollback.prev')) rows.push({ tty, program: '-', command: '-', state: 'lost', unseen: false, lastActivity: '' });
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
      r.unseen ? 'yes' : '-',
      r.lastActivity.replace(/\.\d+Z$/, 'Z'),
      r.command.length > 50 ? `${r.command.slice(0, 47)}...` : r.command,
    ]),
  ];
  const widths = table[0]?.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length))) ?? [];
  return table.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}
