import { readFile, unlink } from 'node:fs/promises';
import { z } from 'zod';
import type { InstancePaths } from '../../config/paths.js';
import { CodedError } from '../../errors.js';
import { writeFileAtomic } from '../../util/atomic-write.js';

/**
 * The record that an instance is suspended (kernel-runner suspend): its container was saved in a
 * snapshot and removed. It lives in the host-private kernel state (`kernel/suspended.json`),
 * never in the data directory: the container cannot make, change or remove it. While it is there
 * no container is made for the instance by anything but a resume (openSandbox refuses), so that
 * nothing starts a fresh container from the image silently and loses what the agent installed.
 */

const recordSchema = z.object({ snapshot: z.string().regex(/^[0-9]+$/), at: z.string() });
export type SuspendRecord = z.infer<typeof recordSchema>;

export async function readSuspended(paths: Pick<InstancePaths, 'suspendRecord'>): Promise<SuspendRecord | undefined> {
  const text = await readFile(paths.suspendRecord, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = recordSchema.safeParse(json);
  if (!parsed.success) throw new CodedError('INSTANCE_SUSPENDED', `The suspend record ${paths.suspendRecord} is damaged; kernel-runner snapshots lists the snapshots (the newest "suspend" one holds the container): kernel-runner rollback NAME ID brings it back.`);
  return parsed.data;
}

export async function writeSuspended(paths: Pick<InstancePaths, 'suspendRecord'>, record: SuspendRecord): Promise<void> {
  await writeFileAtomic(paths.suspendRecord, JSON.stringify(record) + '\n', 0o600);
}

export async function removeSuspended(paths: Pick<InstancePaths, 'suspendRecord'>): Promise<void> {
  await unlink(paths.suspendRecord).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/** Throws INSTANCE_SUSPENDED while the instance is suspended (the fix: resume it, or tick it: a tick resumes it first). */
export async function assertNotSuspended(name: string, paths: Pick<InstancePaths, 'suspendRecord'>): Promise<void> {
  const record = await readSuspended(paths);
  if (!record) return;
  throw new CodedError(
    'INSTANCE_SUSPENDED',
    `${name} is suspended (since ${record.at}; its container is saved in snapshot ${record.snapshot}): kernel-runner resume ${name} brings it back, and so does its next tick (a message or a wake under watch).`,
    { details: { snapshot: record.snapshot } },
  );
}
