/**
 * Newline-delimited messages from a byte stream: whole lines out, the partial one kept. A line
 * longer than `maxBytes` is an error (the peer is not speaking the protocol): memory stays bounded.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The complete lines in `chunk` (without their newline); throws past maxBytes. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end >= 0; end = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, end);
      const whole = this.pendingBytes > 0 ? Buffer.concat([...this.pending, piece]) : piece;
      this.pending = [];
      this.pendingBytes = 0;
      if (whole.length > this.maxBytes) throw new Error(`a message of ${whole.length} bytes is over the ${this.maxBytes}-byte limit`);
      const text = whole.toString('utf8').replace(/\r$/, '');
      if (text !== '') lines.push(text);
      start = end + 1;
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > this.maxBytes) throw new Error(`a message over the ${this.maxBytes}-byte limit`);
    }
    return lines;
  }
}
