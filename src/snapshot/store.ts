import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, type ReadStream } from 'node:fs';
import { link, lstat, mkdir, open, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { CodedError } from '../errors.js';
import type { Budget } from './budget.js';

/**
 * The content-addressed store of an instance's snapshots, in its host-private state
 * (`<state>/snapshots/objects/ab/cdef…`, folders 0700, objects 0400): each content is kept once,
 * named by its sha256, however many snapshots and paths hold it. An object is written to a
 * temp file while hashed, then linked in under its digest (an object never appears half written),
 * so a second snapshot with nothing changed writes no new object.
 */

const DIGEST = /^[0-9a-f]{64}$/;

export interface Stored {
  digest: string;
  size: number;
}

export class ObjectStore {
  readonly objects: string;
  private readonly temp: string;

  constructor(readonly root: string) {
    this.objects = path.join(root, 'objects');
    this.temp = path.join(root, 'tmp');
  }

  async ensure(): Promise<void> {
    for (const dir of [this.root, this.objects, this.temp]) await mkdir(dir, { recursive: true, mode: 0o700 });
  }

  path(digest: string): string {
    if (!DIGEST.test(digest)) throw new CodedError('SNAPSHOT_MISMATCH', `${JSON.stringify(digest)} is not a sha256 digest: the snapshot's manifest is damaged.`);
    return path.join(this.objects, digest.slice(0, 2), digest.slice(2));
  }

  async has(digest: string): Promise<boolean> {
    return lstat(this.path(digest)).then(
      (info) => info.isFile(),
      () => false,
    );
  }

  /**
   * Store what `chunks` yields: at most `size` bytes (the size the caller counted in the budget;
   * content that grows past it while read is refused). Returns its digest and length.
   */
  async put(chunks: AsyncIterable<Buffer> | Iterable<Buffer>, size: number, where: string, budget: Budget): Promise<Stored> {
    await budget.room(where, size);
    const temp = path.join(this.temp, `${process.pid}.${randomBytes(6).toString('hex')}`);
    const handle = await open(temp, 'wx', 0o400);
    const hash = createHash('sha256');
    let length = 0;
    try {
      for await (const chunk of chunks) {
        length += chunk.length;
        if (length > size) throw new CodedError('SNAPSHOT_REFUSED', `Snapshot refused: ${where} grew past the ${size} bytes it had when counted (something writes it during the snapshot). Try again once it is still.`);
        hash.update(chunk);
        await handle.write(chunk);
      }
    } catch (error) {
      await handle.close();
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    await handle.close();
    const digest = hash.digest('hex');
    await this.adopt(temp, digest, length, budget);
    return { digest, size: length };
  }

  /** A small buffer (a configuration, a terminal list). */
  async putBuffer(data: Buffer, where: string, budget: Budget): Promise<Stored> {
    budget.content(where, data.length);
    return this.put([data], data.length, where, budget);
  }

  private async adopt(temp: string, digest: string, length: number, budget: Budget): Promise<void> {
    const file = this.path(digest);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    try {
      await link(temp, file);
      budget.newBytes += length;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  /** The content of `digest`, as a stream; refused when the store lacks it. */
  async read(digest: string): Promise<ReadStream> {
    if (!(await this.has(digest))) throw new CodedError('SNAPSHOT_MISMATCH', `The snapshot store lacks the content ${digest.slice(0, 12)}… (${this.objects}): the snapshot is damaged and cannot be restored.`);
    return createReadStream(this.path(digest));
  }

  async readBuffer(digest: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.read(digest)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** Remove every object not in `keep`; returns the bytes freed. Called with the store held (no snapshot being taken). */
  async collect(keep: ReadonlySet<string>): Promise<number> {
    let freed = 0;
    for (const prefix of await readdir(this.objects).catch(() => [] as string[])) {
      const dir = path.join(this.objects, prefix);
      for (const rest of await readdir(dir).catch(() => [] as string[])) {
        if (keep.has(prefix + rest)) continue;
        const file = path.join(dir, rest);
        const info = await lstat(file).catch(() => undefined);
        await unlink(file).catch(() => undefined);
        freed += info?.size ?? 0;
      }
    }
    for (const name of await readdir(this.temp).catch(() => [] as string[])) await unlink(path.join(this.temp, name)).catch(() => undefined);
    return freed;
  }
}

/**
 * Where file content read during a walk goes: into the store (taking a snapshot), or only
 * through sha256 (checking a restored tree against its manifest, which must write nothing).
 */
export interface ContentSink {
  /** Content of `size` bytes (counted in the budget by the caller) at `where`. */
  put(chunks: AsyncIterable<Buffer> | Iterable<Buffer>, size: number, where: string): Promise<Stored>;
  /** A digest already known for unchanged content, when the sink can trust it (the store holds it). */
  reuse(digest: string): Promise<boolean>;
}

export function storeSink(store: ObjectStore, budget: Budget): ContentSink {
  return {
    put: (chunks, size, where) => store.put(chunks, size, where, budget),
    reuse: (digest) => store.has(digest),
  };
}

/** Hashes only; content past `size` is a change, reported by the comparison rather than thrown. */
export const hashSink: ContentSink = {
  async put(chunks) {
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of chunks) {
      hash.update(chunk);
      size += chunk.length;
    }
    return { digest: hash.digest('hex'), size };
  },
  reuse: () => Promise.resolve(false),
};
