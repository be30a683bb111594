import { readFile } from 'node:fs/promises';

/**
 * Which terminals are open, from `<state>/sessions/registry.json` (written by the
 * terminal layer on every lifecycle event). Read leniently: the runner only needs numbers
 * and whether each terminal is still open.
 */
export interface OpenTerminal {
  tty: number;
  command?: string;
}

const CLOSED_STATES = new Set(['closed', 'archived', 'dead', 'exited', 'lost']);

function entryOf(value: unknown, key?: string): OpenTerminal | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const entry = value as Record<string, unknown>;
  const tty = typeof entry.tty === 'number' ? entry.tty : key !== undefined && /^\d+$/.test(key) ? Number(key) : undefined;
  if (tty === undefined) return undefined;
  if (entry.closed === true || entry.open === false) return undefined;
  const state = typeof entry.status === 'string' ? entry.status : typeof entry.state === 'string' ? entry.state : undefined;
  if (state && CLOSED_STATES.has(state)) return undefined;
  return { tty, ...(typeof entry.command === 'string' ? { command: entry.command } : {}) };
}

/** Pure: the open terminals listed in a parsed registry.json (an array, or an object keyed by number, or under `ttys`/`terminals`). */
export function parseOpenTerminals(input: unknown): OpenTerminal[] {
  if (input === null || typeof input !== 'object') return [];
  const record = input as Record<string, unknown>;
  const inner = record.ttys ?? record.terminals ?? record.sessions;
  if (inner !== undefined && inner !== input) return parseOpenTerminals(inner);
  const entries = Array.isArray(input) ? input.map((v) => entryOf(v)) : Object.entries(record).map(([k, v]) => entryOf(v, k));
  return entries.filter((e): e is OpenTerminal => e !== undefined).sort((a, b) => a.tty - b.tty);
}

export async function readOpenTerminals(file: string): Promise<OpenTerminal[]> {
  try {
    return parseOpenTerminals(JSON.parse(await readFile(file, 'utf8')));
  } catch {
    return [];
  }
}

/** Pure: the pre-stop issue for terminals left open that are not startup terminals. */
export function openTerminalIssues(open: readonly OpenTerminal[], startupTtys: ReadonlySet<number>): string[] {
  return open
    .filter((t) => !startupTtys.has(t.tty))
    .map((t) => `Terminal ${t.tty}${t.command ? ` (${t.command})` : ''} is still open: finish what runs there and close(${t.tty}) before ending the tick.`);
}
