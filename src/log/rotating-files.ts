import fs from 'node:fs';
import path from 'node:path';

/**
 * The log files of one process in `<state>/logs/` (shown read-only at `<data>/system/logs`):
 * - `<process>.log`: today's lines (UTC days). At the first write of a new day it becomes
 *   `<process>.log.YYYY-MM-DD`; those are kept `keepDays` days.
 * - `<process>-current.log`: the latest lines, never more than `maxCurrentBytes`; when full
 *   it becomes `<process>-current.log.1` (one backup) and a new file starts.
 * Writes are synchronous appends, so a crash loses no line already logged.
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

function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export class RotatingLogFiles {
  readonly dailyFile: string;
  readonly currentFile: string;
  private readonly dir: string;
  private readonly process: string;
  private readonly maxCurrentBytes: number;
  private readonly keepDays: number;
  private readonly now: () => Date;
  private day: string;
  private dailyFd: number | undefined;
  private currentFd: number | undefined;
  private currentBytes = 0;
  private failed = false;

  constructor(options: RotatingFilesOptions) {
    this.dir = options.dir;
    this.process = options.process;
    this.maxCurrentBytes = options.maxCurrentBytes ?? DEFAULT_MAX_CURRENT_BYTES;
    this.keepDays = options.keepDays ?? DEFAULT_KEEP_DAYS;
    this.now = options.now ?? (() => new Date());
    this.dailyFile = path.join(this.dir, `${this.process}.log`);
    this.currentFile = path.join(this.dir, `${this.process}-current.log`);
    fs.mkdirSync(this.dir, { recursive: true });
    this.day = utcDay(this.now());
    // A file left by an earlier run on another day belongs to that day.
    const existing = statOrUndefined(this.dailyFile);
    if (existing && utcDay(existing.mtime) !== this.day) this.rotateDaily(utcDay(existing.mtime));
    this.dailyFd = fs.openSync(this.dailyFile, 'a');
    this.currentFd = fs.openSync(this.currentFile, 'a');
    this.currentBytes = fs.fstatSync(this.currentFd).size;
    this.prune();
  }

  write(line: string): void {
    if (this.failed) return;
    try {
      const today = utcDay(this.now());
      if (today !== this.day) {
        this.closeFd('daily');
        this.rotateDaily(this.day);
        this.day = today;
        this.dailyFd = fs.openSync(this.dailyFile, 'a');
        this.prune();
      }
      const bytes = Buffer.byteLength(line);
      if (this.currentBytes > 0 && this.currentBytes + bytes > this.maxCurrentBytes) {
        this.closeFd('current');
        fs.renameSync(this.currentFile, `${this.currentFile}.1`);
        this.currentFd = fs.openSync(this.currentFile, 'a');
        this.currentBytes = 0;
      }
      if (this.dailyFd !== undefined) fs.writeSync(this.dailyFd, line);
      if (this.currentFd !== undefined) fs.writeSync(this.currentFd, line);
      this.currentBytes += bytes;
    } catch (error) {
      // Logging must never take the process down: say so once on stderr and stop writing files.
      this.failed = true;
      process.stderr.write(`agent-kernel: cannot write log files in ${this.dir}: ${(error as Error).message}; logging to stderr only\n`);
    }
  }

  close(): void {
    this.closeFd('daily');
    this.closeFd('current');
  }

  private closeFd(which: 'daily' | 'current'): void {
    const fd = which === 'daily' ? this.dailyFd : this.currentFd;
    if (fd !== undefined) fs.closeSync(fd);
    if (which === 'daily') this.dailyFd = undefined;
    else this.currentFd = undefined;
  }

  private rotateDaily(day: string): void {
    const target = `${this.dailyFile}.${day}`;
    if (fs.existsSync(target)) {
      // Two runs on the same day: keep both by appending.
      fs.appendFileSync(target, fs.readFileSync(this.dailyFile));
      fs.unlinkSync(this.dailyFile);
    } else {
      fs.renameSync(this.dailyFile, target);
    }
  }

  /** Delete dated files older than keepDays. */
  private prune(): void {
    const prefix = `${this.process}.log.`;
    const oldest = utcDay(new Date(this.now().getTime() - this.keepDays * DAY_MS));
    for (const name of fs.readdirSync(this.dir)) {
      if (!name.startsWith(prefix)) continue;
      const day = name.slice(prefix.length);
      if (/^\d{4}-\d{2}-\d{2}$/.test(day) && day < oldest) fs.rmSync(path.join(this.dir, name), { force: true });
    }
  }
}

function statOrUndefined(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}
