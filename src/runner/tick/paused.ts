import path from 'node:path';
import { KernelError, describeError } from '../../errors.js';
import { readUntrustedFileText, relativeInside } from '../../util/untrusted-fs.js';
import { writeUntrustedAtomic } from '../../util/untrusted-write.js';

/**
 * `<data>/system/paused`: written when a tick fails in a way a person must fix (not logged
 * in, bad key, billing...). Its content is the reason. While it exists, no tick runs.
 */
export async function readPaused(file: string): Promise<string | undefined> {
  // The data directory is two levels up (<data>/system/paused); nothing below it is trusted.
  const text = await readUntrustedFileText(path.dirname(path.dirname(file)), file, { maxBytes: 64 * 1024 });
  return text === undefined ? undefined : text.trim() || 'paused (no reason given)';
}

/** readPaused for a loop that must go on: a file that cannot be read pauses too, saying why. */
export async function readPausedReason(file: string): Promise<string | undefined> {
  try {
    return await readPaused(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return `system/paused cannot be read: ${describeError(error)}`;
  }
}

/**
 * Write `<data>/system/paused`: into the agent's folder, so never through a link it planted
 * (untrusted-write.ts). The reason, the commands that fix it, then when and how to resume.
 */
export async function writePaused(file: string, reason: string, tick?: number, fix: readonly string[] = []): Promise<void> {
  const when = new Date().toISOString();
  const header = tick === undefined ? when : `${when} (tick ${tick})`;
  const root = path.dirname(path.dirname(file));
  const body = fix.length ? `${reason}\n\nFix:\n${fix.map((step) => `  ${step}`).join('\n')}\n` : `${reason}\n`;
  await writeUntrustedAtomic(root, relativeInside(root, file), `${body}\n${header}. No tick runs while this file exists (kernel-runner resume removes it).\n`);
}

/** Throw INSTANCE_PAUSED when the instance is paused. */
export async function assertNotPaused(file: string, instanceName: string): Promise<void> {
  const reason = await readPaused(file);
  if (reason === undefined) return;
  const firstLine = reason.split('\n')[0] ?? reason;
  // Not the file's own "Fix:" lines: the agent can write this file, and its advice is not ours to repeat.
  const next = `Fix the cause (agent-kernel doctor ${instanceName} shows how), then: kernel-runner resume ${instanceName}`;
  throw new KernelError('INSTANCE_PAUSED', `Instance "${instanceName}" is paused: ${firstLine}. ${next}`, {
    details: { reason, file },
  });
}
