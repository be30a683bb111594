import { existsSync } from 'node:fs';
import { readdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * Files kept per terminal per tick in a host-private folder: recordings (`tty_N-tick-NNN.cast`)
 * and archived scrollback (`tty_N-tick-NNN`). Work done while no tick runs, after tick NNN, is
 * `tty_N-between-NNN`. A terminal number reused in the same tick gets
 * `-2`, `-3`...: no file is ever written over. Each folder has a total cap; the oldest ticks go first.
 */
export interface TickFileKind {
  /** `.cast` (recording.ts), or '' for none. */
  extension: string;
}

export const ARCHIVE: TickFileKind = { extension: '' };

/** Which tick a file's work was done in: `tick` NNN, or `between` ticks, after tick NNN (none ran at the time). */
export interface TickPlace {
  tick: number;
  between?: boolean;
}

/** `tty_N-tick-NNN[-part]<extension>`, or `tty_N-between-NNN[-part]<extension>` between ticks. */
export function tickFileName(kind: TickFileKind, tty: number, tick: number, part = 1, between = false): string {
  return `tty_${tty}-${between ? 'between' : 'tick'}-${String(tick).padStart(3, '0')}${part > 1 ? `-${part}` : ''}${kind.extension}`;
}

/** Pure: the terminal, tick (or after which tick, `between`) and part of such a name, or undefined for another name. */
export function parseTickFileName(kind: TickFileKind, name: string): { tty: number; tick: number; between: boolean; part: number } | undefined {
  if (!name.endsWith(kind.extension)) return undefined;
  const match = /^tty_(\d{1,2})-(tick|between)-(\d{3,9})(?:-(\d{1,4}))?$/.exec(name.slice(0, name.length - kind.extension.length));
  return match ? { tty: Number(match[1]), tick: Number(match[3]), between: match[2] === 'between', part: match[4] ? Number(match[4]) : 1 } : undefined;
}

/** The first name of this terminal and tick not used yet in `dir`. */
export function freshTickFile(kind: TickFileKind, dir: string, tty: number, tick: number, between = false): string {
  for (let part = 1; ; part++) {
    const file = path.join(dir, tickFileName(kind, tty, tick, part, between));
    if (!existsSync(file)) return file;
  }
}

/** Remove the files of the oldest ticks until those in `dir` take at most `maxTotalBytes` (never the current tick's). */
export async function pruneOldTicks(kind: TickFileKind, dir: string, maxTotalBytes: number, currentTick: number): Promise<void> {
  const files: Array<{ file: string; tick: number; size: number }> = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const parsed = parseTickFileName(kind, name);
    if (!parsed) continue;
    const info = await stat(path.join(dir, name)).catch(() => undefined);
    if (info?.isFile()) files.push({ file: path.join(dir, name), tick: parsed.tick, size: info.size });
  }
  let total = files.reduce((sum, f) => sum + f.size, 0);
  for (const file of files.sort((a, b) => a.tick - b.tick)) {
    if (total <= maxTotalBytes || file.tick >= currentTick) break;
    await unlink(file.file).catch(() => {});
    total -= file.size;
  }
}
