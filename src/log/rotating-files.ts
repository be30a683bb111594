import fs from 'node:fs';
import path from 'node:path';

/**
 * The log file of one process name in `<state>/logs/` (shown read-only at `<data>/system/logs`), shared by every process of that
 * name (several servers write `server.log`): one file, bounded and kept by day.
 * - `<process>.log`: the latest lines. At the first write of a new UTC day, or when a line would
 *   take it past `maxBytes`, it becomes `<process>.log.YYYY-MM-DD` (the day of its last line;
 *   `.YYYY-MM-DD.N` for the day's later ones, N counting up) and a new file starts.
 * - Those dated files are kept `keepDays` days and at most `maxBackups` of them (oldest removed).
 * Writes are synchronous O_APPEND|O_NOFOLLOW writes, so a crash loses no line already logged and
 * processes never overwrite each other. Renames happen under a lock file, after re-checking the
 * file, so two processes never rotate the same file twice; before each write a process checks
 * that its descriptor is still the file at the path and reopens it if another one rotated it.
 * A line racing a rotation lands in the file just moved aside, the newest dated file: only the
 * oldest are ever removed.
 */
export interface RotatingFilesOptions {
  dir: string;
  process: string;
  maxBytes?: number;
  maxBackups?: number;
  keepDays?: number;
  now?: () => Date;
}

export const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
export const DEFAULT_MAX_BACKUPS = 20;
export const DEFAULT_KEEP_DAYS = 14;

const DAY_MS = 86_400_000;
/** A rotation lock older than this was left by a process that died mid-rotation. */
const STALE_LOCK_MS = 10_000;
const APPEND = fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW;

function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** An append descriptor on a path, and which file (inode) it is. */
interface OpenFile {
  fd: number;
  ino: number;
}

function openAppend(file: string): OpenFile {
  const fd = fs.openSync(file, APPEND, 0o600);
  return { fd, ino: fs.fstatSync(fd).ino };
}

function statOrUndefined(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch {
    return undefined;
  }
}

/** A dated file's name after `<process>.log.`: its day and its number within the day (0 for none). */
const DATED = /^(\d{4}-\d{2}-\d{2})(?:\.(\d{1,9}))?$/;

export class RotatingLogFiles {
  readonly file: string;
  private readonly dir: string;
  private readonly process: string;
  private readonly lockFile: string;
  private readonly maxBytes: number;
  private readonly maxBackups: number;
  private readonly keepDays: number;
  private readonly now: () => Date;
  private open: OpenFile | undefined;
  private prunedDay: string | undefined;
  private failed = false;

  constructor(options: RotatingFilesOptions) {
    this.dir = options.dir;
    this.process = options.process;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    // At least one: the file just moved aside may still take a line racing its rotation.
    this.maxBackups = Math.max(1, options.maxBackups ?? DEFAULT_MAX_BACKUPS);
    this.keepDays = options.keepDays ?? DEFAULT_KEEP_DAYS;
    this.now = options.now ?? (() => new Date());
    this.file = path.join(this.dir, `${this.process}.log`);
    this.lockFile = path.join(this.dir, `.${this.process}.rotate.lock`);
    fs.mkdirSync(this.dir, { recursive: true });
  }

  write(line: string): void {
    if (this.failed) return;
    try {
      const now = this.now();
      const today = utcDay(now);
      const bytes = Buffer.byteLength(line);
      this.open = this.ready(this.open, (stat) => utcDay(stat.mtime) !== today || stat.size + bytes > this.maxBytes);
      fs.writeSync(this.open.fd, line);
      // The file's day is its mtime: keep it on the logger's clock.
      fs.futimesSync(this.open.fd, now, now);
      if (this.prunedDay !== today) {
        this.prunedDay = today;
        this.prune(now);
      }
    } catch (error) {
      // Logging must never take the process down: say so once on stderr and stop writing files.
      this.failed = true;
      process.stderr.write(`agent-kernel: cannot write log files in ${this.dir}: ${(error as Error).message}; logging to stderr only\n`);
    }
  }

  close(): void {
    if (this.open) fs.closeSync(this.open.fd);
    this.open = undefined;
  }

  /**
   * A descriptor on the file now at the path: rotated first (under the lock) when `due` says so,
   * reopened when another process has rotated it since we opened it.
   */
  private ready(open: OpenFile | undefined, due: (stat: fs.Stats) => boolean): OpenFile {
    const stat = statOrUndefined(this.file);
    if (stat && stat.size > 0 && due(stat)) this.rotateLocked(due);
    const now = statOrUndefined(this.file);
    if (open && now?.ino === open.ino) return open;
    if (open) fs.closeSync(open.fd);
    return openAppend(this.file);
  }

  private rotateLocked(due: (stat: fs.Stats) => boolean): void {
    if (!this.takeLock()) return;
    try {
      // Another process may have rotated it between our look and the lock.
      const stat = statOrUndefined(this.file);
      if (stat?.isFile() && stat.size > 0 && due(stat)) {
        fs.renameSync(this.file, this.datedName(utcDay(stat.mtime)));
        this.prune(this.now());
      }
    } finally {
      fs.rmSync(this.lockFile, { force: true });
    }
  }

  /** Never waits: a process that finds the lock taken writes on and looks again next line. */
  private takeLock(): boolean {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.closeSync(fs.openSync(this.lockFile, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600));
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const lock = statOrUndefined(this.lockFile);
        if (!lock || Date.now() - lock.mtimeMs < STALE_LOCK_MS) return false;
        fs.rmSync(this.lockFile, { force: true });
      }
    }
    return false;
  }

  /** The dated files, oldest first (by day, then number). */
  private dated(): { name: string; day: string; n: number }[] {
    return datedLogFiles(fs.readdirSync(this.dir), this.process);
  }

  /** `<process>.log.DAY`, or `.DAY.N` after the day's newest (never overwritten, never numbered below one kept). */
  private datedName(day: string): string {
    const numbers = this.dated().filter((file) => file.day === day).map((file) => file.n);
    const base = `${this.file}.${day}`;
    return numbers.length === 0 ? base : `${base}.${Math.max(...numbers) + 1}`;
  }

  /**
   * Delete dated files older than keepDays and the oldest beyond maxBackups, and the
   * `<process>-current.log` pair earlier versions wrote beside `<process>.log` (same lines).
   */
  private prune(now: Date): void {
    const oldest = utcDay(new Date(now.getTime() - this.keepDays * DAY_MS));
    const files = this.dated();
    const tooMany = files.length - this.maxBackups;
    files.forEach((file, index) => {
      if (file.day < oldest || index < tooMany) fs.rmSync(path.join(this.dir, file.name), { force: true });
    });
    for (const legacy of [`${this.process}-current.log`, `${this.process}-current.log.1`]) fs.rmSync(path.join(this.dir, legacy), { force: true });
  }
}

/** Pure: of a logs folder's names, the dated files `process` rotated out, oldest first (by day, then number). */
export function datedLogFiles(names: readonly string[], process: string): { name: string; day: string; n: number }[] {
  const prefix = `${process}.log.`;
  return names
    .flatMap((name) => {
      const match = name.startsWith(prefix) ? DATED.exec(name.slice(prefix.length)) : null;
      return match ? [{ name, day: match[1]!, n: Number(match[2] ?? 0) }] : [];
    })
    .sort((a, b) => (a.day === b.day ? a.n - b.n : a.day < b.day ? -1 : 1));
}
