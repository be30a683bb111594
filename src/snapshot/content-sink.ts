import { createHash } from 'node:crypto';
import type { Budget } from './budget.js';
import type { ObjectStore, Stored } from './store.js';

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
