import { statfs } from 'node:fs/promises';
import { CodedError } from '../errors.js';

/**
 * The operator's bounds on one snapshot. Everything in a snapshot came from the agent: a 10 GB
 * sparse file or a million empty files must be refused with a message that says which and
 * what to change, before it fills the host's disk or takes an hour.
 */
export interface SnapshotLimits {
  /** Bytes of content (files, links, scrollback) one snapshot may hold, whatever is new. */
  maxBytes: number;
  /** Entries (files, folders, links) one snapshot may hold. */
  maxFiles: number;
  /** Free space the store's filesystem must keep: a snapshot that would go below it is refused. */
  reserveBytes: number;
}

export const DEFAULT_LIMITS: SnapshotLimits = {
  maxBytes: 4 * 1024 ** 3,
  maxFiles: 200_000,
  reserveBytes: 1024 ** 3,
};

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

const SETTING = "the snapshots section of the operator's instance file";

/** What one snapshot has counted so far; every entry and every byte goes through here first. */
export class Budget {
  files = 0;
  bytes = 0;
  /** Bytes written to the store for the first time (not already held by an earlier snapshot). */
  newBytes = 0;
  /** Files whose content was known from the snapshot before (the same change stamp): not read. */
  unread = 0;
  private freeAtStart: number | undefined;

  constructor(
    readonly limits: SnapshotLimits,
    private readonly storeRoot: string,
  ) {}

  /** One more entry at `where` (a path for the message). */
  entry(where: string): void {
    this.files++;
    if (this.files > this.limits.maxFiles) {
      throw new CodedError(
        'SNAPSHOT_REFUSED',
        `Snapshot refused: more than ${this.limits.maxFiles} files (the count reached ${where}). Remove what the agent does not need, or raise snapshots.max_files in ${SETTING}.`,
        { details: { files: this.files, maxFiles: this.limits.maxFiles, at: where } },
      );
    }
  }

  /** `size` more bytes of content at `where`, counted before they are read. */
  content(where: string, size: number): void {
    this.bytes += size;
    if (this.bytes > this.limits.maxBytes) {
      throw new CodedError(
        'SNAPSHOT_REFUSED',
        `Snapshot refused: its content passes the ${formatBytes(this.limits.maxBytes)} cap at ${where} (${formatBytes(size)}). Delete or shrink that file, or raise snapshots.max_mb in ${SETTING}.`,
        { details: { bytes: this.bytes, maxBytes: this.limits.maxBytes, at: where, size } },
      );
    }
  }

  /** Before `size` bytes are written to the store: refused when the disk would go below the reserve. */
  async room(where: string, size: number): Promise<void> {
    this.freeAtStart ??= await freeBytes(this.storeRoot);
    if (this.freeAtStart - this.newBytes - size < this.limits.reserveBytes) {
      throw new CodedError(
        'SNAPSHOT_REFUSED',
        `Snapshot refused: writing ${where} would leave less than ${formatBytes(this.limits.reserveBytes)} free on the disk of ${this.storeRoot}. Remove old snapshots (kernel-runner snapshot rm) or free disk space.`,
        { details: { at: where, size, free: this.freeAtStart - this.newBytes } },
      );
    }
  }
}

async function freeBytes(dir: string): Promise<number> {
  const info = await statfs(dir);
  return info.bavail * info.bsize;
}

/** The operator's `snapshots` settings → the bounds of one snapshot. */
export function limitsOf(settings: { max_mb: number; max_files: number }): SnapshotLimits {
  return { ...DEFAULT_LIMITS, maxBytes: settings.max_mb * 1024 ** 2, maxFiles: settings.max_files };
}
