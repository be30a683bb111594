import path from 'node:path';
import { KernelError } from '../errors.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { readUntrustedText } from '../util/untrusted-fs.js';

/**
 * `<data>/system/paused`: written when a tick fails in a way a person must fix (not logged
 * in, bad key, billing...). Its content is the reason. While it exists, no tick runs.
 */
export async function readPaused(file: string): Promise<string | undefined> {
  try {
    // `<data>/system/paused`: read as untrusted (the container can replace it with a link or a FIFO).
    const text = await readUntrustedText(path.dirname(file), path.basename(file));
    return text === undefined ? undefined : text.trim() || 'paused (no reason given)';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export async function writePaused(file: string, reason: string, tick?: number): Promise<void> {
  const when = new Date().toISOString();
  const header = tick === undefined ? when : `${when} (tick ${tick})`;
  await writeFileAtomic(file, `${reason}\n\n${header}. Fix the cause, then delete this file to resume ticks.\n`);
}

/** Throw INSTANCE_PAUSED when the instance is paused. */
export async function assertNotPaused(file: string, instanceName: string): Promise<void> {
  const reason = await readPaused(file);
  if (reason === undefined) return;
  const firstLine = reason.split('\n')[0] ?? reason;
  throw new KernelError('INSTANCE_PAUSED', `Instance "${instanceName}" is paused: ${firstLine}. Fix the cause, then remove ${file} to resume.`, {
    details: { reason, file },
  });
}
