import fs from 'node:fs';
import path from 'node:path';

/**
 * The log files of one process name in `<state>/logs/` (shown read-only at `<data>/system/logs`), shared by every process of that
 * name (several servers write `server.log`):
 * - `<process>.log`: today's lines (UTC days). At the first write of a new day it becomes
 *   `<process>.log.YYYY-MM-DD`; those are kept `keepDays` days.
 * - `<process>-current.log`: the latest lines, about `maxCurrentBytes` at most; when full it
 *   becomes `<process>-current.log.1` (one backup) and a new file starts.
 * Writes are synchronous O_APPEND writes, so a crash loses no line already logged and
 * processes never overwrite each other. Renames happen under a lock file, after re-checking the
 * file, so two processes never rotate the same file twice; before each write a process checks
 * that its descriptor is still the file at the path and reopens it if another one rotated it.
 * A line racing a rotation lands in the file just moved aside: never in a removed file.
 */
export interface RotatingFilesOptions {
  dir: string;
  process: string;
  maxCurrentBytes?: number;
  keepDays?: number;
  now?: () => Date;
}

export const DEFAULT_MAX_CURRENT_BYTES = 5 * 1024 * 1024;
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

export class RotatingLogFiles {
  readonly dailyFile: string;
  readonly currentFile: string;
  private readonly dir: string;
  private readonly process: string;
  private readonly lockFile: string;
  private readonly maxCurrentBytes: number;
  private readonly keepDays: number;
  private readonly now: () => Date;
  private daily: OpenFile | undefined;
  private current: OpenFile | undefined;
  private prunedDay: string | undefined;
  private failed = false;

  constructor(options: RotatingFilesOptions) {
    this.dir = options.dir;
    this.process = options.process;
    this.maxCurrentBytes = options.maxCurrentBytes ?? DEFAULT_MAX_CURRENT_BYTES;
    this.keepDays = options.keepDays ?? DEFAULT_KEEP_DAYS;
    this.now = options.now ?? (() => new Date());
    this.dailyFile = path.join(this.dir, `${this.process}.log`);
    this.currentFile = path.join(this.dir, `${this.process}-current.log`);
    this.lockFile = path.join(this.dir, `.${this.process}.rotate.lock`);
    fs.mkdirSync(this.dir, { recursive: true });
  }

  write(line: string): void {
    if (this.failed) return;
    try {
      const now = this.now();
      const today = utcDay(now);
      this.daily = this.ready(this.daily, this.dailyFile, (stat) => utcDay(stat.mtime) !== today, (stat) => this.datedName(utcDay(stat.mtime)));
      const bytes = Buffer.byteLength(line);
      this.current = this.ready(this.current, this.currentFile, (stat) => stat.size > 0 && stat.size + bytes > this.maxCurrentBytes, () => `${this.currentFile}.1`);
      fs.writeSync(this.daily.fd, line);
      // The daily file's day is its mtime: keep it on the logger's clock.
      fs.futimesSync(this.daily.fd, now, now);
      fs.writeSync(this.current.fd, line);
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
    for (const open of [this.daily, this.current]) if (open) fs.closeSync(open.fd);
    this.daily = undefined;
    this.current = undefined;
  }

  /**
   * A descriptor on the file now at `file`: rotated first (under the lock) when `due` says so,
   * reopened when another process has rotated it since we opened it.
   */
  private ready(open: OpenFile | undefined, file: string, due: (stat: fs.Stats) => boolean, target: (stat: fs.Stats) => string): OpenFile {
    const stat = statOrUndefined(file);
    if (stat && stat.size > 0 && due(stat)) this.rotateLocked(file, due, target);
    const now = statOrUndefined(file);
    if (open && now?.ino === open.ino) return open;
    if (open) fs.closeSync(open.fd);
    return openAppend(file);
  }

  private rotateLocked(file: string, due: (stat: fs.Stats) => boolean, target: (stat: fs.Stats) => string): void {
    if (!this.takeLock()) return;
    try {
      // Another process may have rotated it between our look and the lock.
      const stat = statOrUndefined(file);
      if (stat?.isFile() && stat.size > 0 && due(stat)) fs.renameSync(file, target(stat));
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

  /** `<process>.log.DAY`, or `.DAY.N` when a file for that day exists already (never overwritten). */
  private datedName(day: string): string {
    const base = `${this.dailyFile}.${day}`;
    if (!statOrUndefined(base)) return base;
    for (let n = 1; ; n++) if (!statOrUndefined(`${base}.${n}`)) return `${base}.${n}`;
  }

  /** Delete dated files older than keepDays. */
  private prune(now: Date): void {
    const prefix = `${this.process}.log.`;
    const oldest = utcDay(new Date(now.getTime() - this.keepDays * DAY_MS));
    for (const name of fs.readdirSync(this.dir)) {
      if (!name.startsWith(prefix)) continue;
      const day = /^(\d{4}-\d{2}-\d{2})(\.\d+)?$/.exec(name.slice(prefix.length))?.[1];
      if (day && day < oldest) fs.rmSync(path.join(this.dir, name), { force: true });
    }
  }
}
