import { CodedError } from '../errors.js';
import type { Entry } from './manifest.js';

/**
 * Pure: what differs between a tree as restored and as its manifest says, entry by entry (type,
 * mode, owner, size, digest, link target; a hard link counts as the file it links to). A restore
 * that is not checked is worse than none: rollback, fork and resume refuse to start on any
 * difference, saying which.
 */

export interface CompareOptions {
  /** Compare owners (the host tree when this process is root; always in the container). */
  owners: boolean;
  /** Entries present now but not in the manifest count (a host tree rebuilt whole); in the container, only the manifest's own paths count. */
  extras: boolean;
}

/** Each path's content digest, a hard link resolved to its target's. */
function contentOf(entries: readonly Entry[]): Map<string, Entry & { content?: string }> {
  const byPath = new Map<string, Entry & { content?: string }>(entries.map((e) => [e.path, { ...e }]));
  for (const entry of byPath.values()) {
    if (entry.type === 'file') entry.content = entry.digest;
    if (entry.type === 'hardlink' && entry.target !== undefined) {
      const target = byPath.get(entry.target);
      entry.content = target?.digest;
    }
  }
  return byPath;
}

function kindOf(entry: Entry): string {
  return entry.type === 'hardlink' ? 'file' : entry.type;
}

export function compareTrees(expected: readonly Entry[], actual: readonly Entry[], options: CompareOptions): string[] {
  const want = contentOf(expected);
  const have = contentOf(actual);
  const differences: string[] = [];
  for (const [file, saved] of want) {
    const now = have.get(file);
    if (!now) {
      differences.push(`${file}: missing`);
      continue;
    }
    if (kindOf(now) !== kindOf(saved)) differences.push(`${file}: a ${kindOf(now)}, was a ${kindOf(saved)}`);
    else if (saved.content !== now.content) differences.push(`${file}: content differs (sha256 ${now.content?.slice(0, 12) ?? 'none'}…, was ${saved.content?.slice(0, 12) ?? 'none'}…)`);
    else if (saved.type === 'symlink' && saved.target !== now.target) differences.push(`${file}: links to ${JSON.stringify(now.target)}, was ${JSON.stringify(saved.target)}`);
    else if (saved.mode !== now.mode) differences.push(`${file}: mode ${now.mode.toString(8)}, was ${saved.mode.toString(8)}`);
    else if (options.owners && (saved.uid !== now.uid || saved.gid !== now.gid)) differences.push(`${file}: owner ${now.uid}:${now.gid}, was ${saved.uid}:${saved.gid}`);
  }
  if (options.extras) for (const file of have.keys()) if (!want.has(file)) differences.push(`${file}: not in the snapshot`);
  return differences;
}

const SHOWN = 10;

/** Throws SNAPSHOT_MISMATCH naming what differs (the first few) when anything does. */
export function assertSame(what: string, differences: readonly string[], next: string): void {
  if (differences.length === 0) return;
  const shown = differences.slice(0, SHOWN).map((d) => `  ${d}`).join('\n');
  const more = differences.length > SHOWN ? `\n  … and ${differences.length - SHOWN} more` : '';
  throw new CodedError('SNAPSHOT_MISMATCH', `The restored ${what} differs from the snapshot in ${differences.length} place(s):\n${shown}${more}\n${next}`, {
    details: { differences: differences.length },
  });
}
