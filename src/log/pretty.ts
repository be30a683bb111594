import { escapeControls } from '../util/control-chars.js';

/**
 * Log lines for a person at a terminal: `12:03:04 WARN  demo tick 3: retrying after a
 * transient error · reason="API error 529" delay=10s`. Files and pipes keep pino's JSON
 * (logger.ts picks); this is only what stderr shows when it is a terminal.
 *
 * Everything taken from the record passes escapeControls before any colour is added, so a
 * value the agent wrote (a paused reason, a command) cannot act on the terminal, and a newline
 * in a message continues indented instead of starting what would look like a log line.
 */

export type LogFormat = 'json' | 'pretty';

/** Pure: which format stderr gets. `AGENT_KERNEL_LOG_FORMAT` (json | pretty) wins; else pretty on a terminal. */
export function stderrFormat(env: NodeJS.ProcessEnv, stderrIsTerminal: boolean): LogFormat {
  const chosen = env.AGENT_KERNEL_LOG_FORMAT?.toLowerCase();
  if (chosen === 'json' || chosen === 'pretty') return chosen;
  return stderrIsTerminal ? 'pretty' : 'json';
}

/** Pure: colour unless NO_COLOR is set (https://no-color.org) or the terminal is dumb. */
export function wantsColor(env: NodeJS.ProcessEnv): boolean {
  return !env.NO_COLOR && env.TERM !== 'dumb';
}

const LEVELS: Record<number, { name: string; color: string }> = {
  10: { name: 'TRACE', color: '2' },
  20: { name: 'DEBUG', color: '2' },
  30: { name: 'INFO', color: '36' },
  40: { name: 'WARN', color: '33' },
  50: { name: 'ERROR', color: '31' },
  60: { name: 'FATAL', color: '1;31' },
};

/** pino's own fields: shown in other ways, or not at all. */
const HIDDEN = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'v']);
/** Bindings that say what a line is about: they lead the line ("demo tick 3 tty 2"). */
const CONTEXT = ['instance', 'tick', 'attempt', 'tty'] as const;
/** The longest value shown; the file keeps all of it. */
const MAX_VALUE = 160;
const CONTINUATION = '\n    ';

function clip(text: string, max = MAX_VALUE): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Pure: 950 → "950ms", 10000 → "10s", 90000 → "1m30s". */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0))}s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  if (minutes < 60) return seconds ? `${minutes}m${seconds}s` : `${minutes}m`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

function errorText(value: unknown): string {
  if (value && typeof value === 'object') {
    const err = value as { message?: unknown; code?: unknown; type?: unknown };
    const message = typeof err.message === 'string' ? (err.message.split('\n')[0] ?? '') : JSON.stringify(value);
    return typeof err.code === 'string' && !message.includes(err.code) ? `${err.code}: ${message}` : message;
  }
  return String(value);
}

/** One field as `key=value`: plain words bare, anything else as JSON (so a newline stays `\n`). */
function field(key: string, value: unknown): string {
  if (typeof value === 'number' && /.Ms$/.test(key)) return `${key.slice(0, -2)}=${formatMs(value)}`;
  if (key === 'err') return `error=${JSON.stringify(clip(errorText(value)))}`;
  if (typeof value === 'string') return `${key}=${/^[\w./:@+-]+$/.test(value) ? clip(value) : JSON.stringify(clip(value))}`;
  return `${key}=${clip(JSON.stringify(value) ?? String(value))}`;
}

function context(record: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const key of CONTEXT) {
    const value = record[key];
    if (value === undefined || value === null) continue;
    if (key === 'attempt' && value === 1) continue;
    parts.push(key === 'instance' ? String(value) : `${key} ${String(value)}`);
  }
  return parts.join(' ');
}

/** HH:MM:SS on the person's clock (with the date first: YYYY-MM-DD HH:MM:SS). */
function clock(time: unknown, withDate = false): string {
  const date = typeof time === 'number' ? new Date(time) : new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  const day = withDate ? `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` : '';
  return `${day}${[date.getHours(), date.getMinutes(), date.getSeconds()].map(pad).join(':')}`;
}

/** Pure: one parsed pino record as a short line for a person (ending in a newline). */
export function formatPretty(record: Record<string, unknown>, options: { color: boolean; date?: boolean; source?: string }): string {
  const level = LEVELS[Number(record.level)] ?? { name: String(record.level), color: '0' };
  const paint = (code: string, text: string) => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const about = context(record);
  const message = typeof record.msg === 'string' ? record.msg : '';
  const rest = Object.entries(record)
    .filter(([key, value]) => !HIDDEN.has(key) && !(CONTEXT as readonly string[]).includes(key) && value !== undefined)
    .map(([key, value]) => field(key, value));
  const text = [about ? `${about}: ${message}` : message, ...(rest.length ? [rest.join(' ')] : [])].join(' · ');
  const safe = escapeControls(text).replace(/\n/g, CONTINUATION);
  const source = options.source ? `${paint('2', escapeControls(options.source))} ` : '';
  return `${paint('2', clock(record.time, options.date))} ${paint(level.color, level.name.padEnd(5))} ${source}${safe}\n`;
}
