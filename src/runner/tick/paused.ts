import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { InstancePaths } from '../../config/paths.js';
import { CodedError, describeError } from '../../errors.js';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { readUntrustedFileText, relativeInside } from '../../util/untrusted-fs.js';
import { removeUntrusted, writeUntrustedAtomic } from '../../util/untrusted-write.js';

/**
 * A pause is the operator's. When a tick fails in a way a person must fix (not logged in, bad key,
 * billing...), the host records the pause in its private state (`pauseRecord`, out of the
 * container's reach) and writes `<data>/system/paused` (`paths.paused`) as the agent's view of it.
 * Removing that view lifts nothing: only `kernel-runner resume` (removePaused) removes the record.
 * The agent may add a pause of its own by writing `system/paused` (its own file, read below the
 * data directory without following a link); it pauses until it or resume removes it. Every reader
 * and writer goes through this module, so watch, tick, status, doctor and the web view agree.
 */
export type PausedFile = Pick<InstancePaths, 'root' | 'paused' | 'pauseRecord'>;

/** The reason the instance is paused (the host's record first, then the agent's own file), or undefined. */
export async function readPaused(paths: PausedFile): Promise<string | undefined> {
  const recorded = await readFile(paths.pauseRecord, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (recorded !== undefined) return recorded.trim() || 'paused (no reason given)';
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
 * Pause: the host's record (host-private), then the agent's view (into the agent's folder, so never
 * through a link it planted: untrusted-write.ts; a view that cannot be written changes nothing).
 * The reason, the commands that fix it, then when and how to resume.
 */
export async function writePaused(paths: PausedFile, reason: string, tick?: number, fix: readonly string[] = []): Promise<void> {
  const when = new Date().toISOString();
  const header = tick === undefined ? when : `${when} (tick ${tick})`;
  const body = fix.length ? `${reason}\n\nFix:\n${fix.map((step) => `  ${step}`).join('\n')}\n` : `${reason}\n`;
  const text = `${body}\n${header}. No tick runs until kernel-runner resume (removing this file lifts nothing: the host keeps the pause).\n`;
  await mkdir(path.dirname(paths.pauseRecord), { recursive: true, mode: 0o700 });
  await writeFileAtomic(paths.pauseRecord, text, 0o600);
  await writeUntrustedAtomic(paths.root, relativeInside(paths.root, paths.paused), text).catch(() => undefined);
}

/** Resume: the host's record and the view (never through a link the agent planted on the way). */
export async function removePaused(paths: PausedFile): Promise<void> {
  await rm(paths.pauseRecord, { force: true });
  await removeUntrusted(paths.root, relativeInside(paths.root, paths.paused));
}

/** Throw INSTANCE_PAUSED when the instance is paused. */
export async function assertNotPaused(paths: PausedFile, instanceName: string): Promise<void> {
  const reason = await readPaused(paths);
  if (reason === undefined) return;
  const firstLine = reason.split('\n')[0] ?? reason;
  // Not the file's own "Fix:" lines: the agent can write this file, and its advice is not ours to repeat.
  const next = `Fix the cause (agent-kernel doctor ${instanceName} shows how), then: kernel-runner resume ${instanceName}`;
  throw new CodedError('INSTANCE_PAUSED', `Instance "${instanceName}" is paused: ${firstLine}. ${next}`, {
    details: { reason, file: paths.paused },
  });
}
