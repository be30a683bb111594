import type { DataPaths } from '../../config/paths.js';
import { KernelError, describeError } from '../../errors.js';
import { readUntrustedFileText, relativeInside } from '../../util/untrusted-fs.js';
import { removeUntrusted, writeUntrustedAtomic } from '../../util/untrusted-write.js';

/**
 * `<data>/system/paused` (`dataPaths().paused`): written when a tick fails in a way a person must
 * fix (not logged in, bad key, billing...). Its content is the reason. While it exists, no tick
 * runs. The agent can write it too: read and written below the data directory `root` without
 * following a link. Every reader and writer goes through this module.
 */
export type PausedFile = Pick<DataPaths, 'root' | 'paused'>;

export async function readPaused(paths: PausedFile): Promise<string | undefined> {
  const text = await readUntrustedFileText(paths.root, paths.paused, { maxBytes: 64 * 1024 });
  return text === undefined ? undefined : text.trim() || 'paused (no reason given)';
}

/** readPaused for a loop that must go on: a file that cannot be read pauses too, saying why. */
export async function readPausedReason(paths: PausedFile): Promise<string | undefined> {
  try {
    return await readPaused(paths);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return `system/paused cannot be read: ${describeError(error)}`;
  }
}

/**
 * Write `<data>/system/paused`: into the agent's folder, so never through a link it planted
 * (untrusted-write.ts). The reason, the commands that fix it, then when and how to resume.
 */
export async function writePaused(paths: PausedFile, reason: string, tick?: number, fix: readonly string[] = []): Promise<void> {
  const when = new Date().toISOString();
  const header = tick === undefined ? when : `${when} (tick ${tick})`;
  const body = fix.length ? `${reason}\n\nFix:\n${fix.map((step) => `  ${step}`).join('\n')}\n` : `${reason}\n`;
  await writeUntrustedAtomic(paths.root, relativeInside(paths.root, paths.paused), `${body}\n${header}. No tick runs while this file exists (kernel-runner resume removes it).\n`);
}

/** Resume: remove the file (never through a link the agent planted on the way). */
export async function removePaused(paths: PausedFile): Promise<void> {
  await removeUntrusted(paths.root, relativeInside(paths.root, paths.paused));
}

/** Throw INSTANCE_PAUSED when the instance is paused. */
export async function assertNotPaused(paths: PausedFile, instanceName: string): Promise<void> {
  const reason = await readPaused(paths);
  if (reason === undefined) return;
  const firstLine = reason.split('\n')[0] ?? reason;
  // Not the file's own "Fix:" lines: the agent can write this file, and its advice is not ours to repeat.
  const next = `Fix the cause (agent-kernel doctor ${instanceName} shows how), then: kernel-runner resume ${instanceName}`;
  throw new KernelError('INSTANCE_PAUSED', `Instance "${instanceName}" is paused: ${firstLine}. ${next}`, {
    details: { reason, file: paths.paused },
  });
}
