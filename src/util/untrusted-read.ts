import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';

/**
 * Reading files a hostile process may have planted: the last component must not be a
 * link (O_NOFOLLOW), the file must be a regular file (a FIFO would block; O_NONBLOCK
 * keeps the open itself from hanging), and at most `maxBytes` are read.
 */
export async function openRegularFile(file: string): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  const info = await handle.stat().catch(() => undefined);
  if (!info?.isFile()) {
    await handle.close();
    return undefined;
  }
  return handle;
}

/** Bytes [from, from+maxBytes) of a regular file, or undefined when it is missing, a link or not a file. */
export async function readRegularFile(file: string, options: { from?: number; maxBytes: number }): Promise<{ data: Buffer; size: number } | undefined> {
  const handle = await openRegularFile(file);
  if (!handle) return undefined;
  try {
    const { size } = await handle.stat();
    const from = Math.max(0, Math.min(options.from ?? 0, size));
    const length = Math.min(options.maxBytes, size - from);
    const data = Buffer.alloc(length);
    const { bytesRead } = length > 0 ? await handle.read(data, 0, length, from) : { bytesRead: 0 };
    return { data: data.subarray(0, bytesRead), size };
  } finally {
    await handle.close();
  }
}

/** The last `maxBytes` of a regular file (whole lines: a torn first line is dropped). */
export async function readTail(file: string, maxBytes: number): Promise<string | undefined> {
  const handle = await openRegularFile(file);
  if (!handle) return undefined;
  try {
    const { size } = await handle.stat();
    const from = Math.max(0, size - maxBytes);
    const data = Buffer.alloc(size - from);
    const { bytesRead } = await handle.read(data, 0, data.length, from);
    const text = data.subarray(0, bytesRead).toString('utf8');
    return from > 0 ? text.slice(text.indexOf('\n') + 1) : text;
  } finally {
    await handle.close();
  }
}
