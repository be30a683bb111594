import { readUntrustedRange } from '../../util/untrusted-fs.js';

/**
 * New complete lines of a file that only grows (a recording, a transcript, the event log), read
 * from where the last call stopped. A file that shrank was replaced or rotated: start over.
 */
export class LineFollower {
  constructor(
    private readonly dir: string,
    private readonly name: string,
    private position = 0,
  ) {}

  get offset(): number {
    return this.position;
  }

  /** Lines since the last call (at most `maxBytes` of them); `restarted` when the file shrank and is read from its start. */
  async read(maxBytes = 8 * 1024 * 1024): Promise<{ lines: string[]; restarted: boolean; size: number } | undefined> {
    let chunk = await readUntrustedRange(this.dir, this.name, { from: this.position, maxBytes });
    if (!chunk) return undefined;
    let restarted = false;
    if (chunk.size < this.position) {
      this.position = 0;
      restarted = true;
      chunk = await readUntrustedRange(this.dir, this.name, { from: 0, maxBytes });
      if (!chunk) return undefined;
    }
    const end = chunk.data.lastIndexOf(0x0a) + 1;
    if (end === 0) return { lines: [], restarted, size: chunk.size };
    this.position += end;
    const lines = chunk.data.subarray(0, end).toString('utf8').split('\n');
    lines.pop();
    return { lines, restarted, size: chunk.size };
  }

  /** Skip to the first whole line at or after `from`. */
  async seek(from: number): Promise<void> {
    if (from <= 0) {
      this.position = 0;
      return;
    }
    const probe = await readUntrustedRange(this.dir, this.name, { from, maxBytes: 64 * 1024 });
    const newline = probe ? probe.data.indexOf(0x0a) : -1;
    this.position = newline < 0 ? from : from + newline + 1;
  }
}
