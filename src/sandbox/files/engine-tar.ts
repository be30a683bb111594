import type { Readable } from 'node:stream';
import tar from 'tar-stream';
import { describeError } from '../../errors.js';
import { refused } from '../../util/untrusted-dir.js';

/**
 * The tar streams of the engine's archive API, as hostile input: what `getArchive` returns for a
 * path inside the agent's container is what the agent made there. `readOneFile` takes exactly one
 * regular file of at most `maxBytes` and stops the transfer (closes the connection) the moment
 * anything else shows: a link, FIFO, device or folder in the first header, a size over the limit,
 * more bytes than the header said, a second entry. Nothing is extracted on the host.
 */

/** Tar headers (and a pax header for a long name) around one file's bytes: allowed on top of maxBytes on the wire. */
const TAR_OVERHEAD = 64 * 1024;

export async function readOneFile(stream: Readable, file: string, maxBytes: number): Promise<Uint8Array> {
  const extract = tar.extract();
  let received = 0;
  let settled = false;
  return new Promise<Uint8Array>((resolve, reject) => {
    const stop = (error: Error | undefined, data?: Uint8Array): void => {
      if (settled) return;
      settled = true;
      stream.unpipe(extract);
      stream.destroy();
      extract.destroy();
      if (error) reject(error);
      else resolve(data ?? new Uint8Array());
    };
    let taken: Uint8Array | undefined;
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes + TAR_OVERHEAD) stop(refused(file, `is over the ${maxBytes}-byte limit (the engine sent more than that)`, 'Make it smaller.'));
    });
    stream.on('error', (error) => stop(refused(file, `could not be read through the engine (${describeError(error)})`, 'Try again.', error)));
    extract.on('entry', (header, body, next) => {
      if (taken !== undefined) return stop(refused(file, 'came with more than one entry', 'Replace it with a regular file.'));
      if (header.type !== 'file' && header.type !== 'contiguous-file') {
        return stop(refused(file, `is not a regular file (a ${header.type ?? 'special entry'}: links in the data directory are never followed)`, 'Replace it with a regular file.'));
      }
      const size = header.size ?? 0;
      if (size > maxBytes) return stop(refused(file, `is ${size} bytes, over the ${maxBytes}-byte limit`, 'Make it smaller.'));
      const chunks: Buffer[] = [];
      let length = 0;
      body.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (length > maxBytes) return stop(refused(file, `grew past the ${maxBytes}-byte limit while being read`, 'Make it smaller.'));
        chunks.push(chunk);
      });
      body.on('end', () => {
        taken = Buffer.concat(chunks);
        next();
      });
    });
    extract.on('finish', () => (taken === undefined ? stop(refused(file, 'came as an empty archive', 'Check the file.')) : stop(undefined, taken)));
    extract.on('error', (error) => stop(refused(file, `came as a tar stream that is not valid (${describeError(error)})`, 'Check the file.', error)));
    stream.pipe(extract);
  });
}

/** One entry of a tar we write: a folder (no data) or a regular file, owned by root. */
export interface TarEntry {
  name: string;
  mode: number;
  data?: Uint8Array;
}

/** One tar of `entries`, in order (a folder before what it holds): the one tar writer for the engine's archive API. */
export async function packTar(entries: readonly TarEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', resolve);
    pack.on('error', reject);
  });
  const mtime = new Date();
  for (const { name, mode, data } of entries) {
    if (data === undefined) pack.entry({ name, type: 'directory', mode, uid: 0, gid: 0, mtime });
    else pack.entry({ name, type: 'file', mode, uid: 0, gid: 0, mtime, size: data.length }, Buffer.from(data));
  }
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}
