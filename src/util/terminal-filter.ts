/**
 * What a terminal the container drew on may pass on to a person's terminal. Text, C0 controls
 * and CSI sequences (cursor, colours, erase, modes) pass; ESC sequences of two or three bytes
 * pass; the string sequences do not: OSC (clipboard writes with OSC 52, titles, hyperlinks,
 * colour queries), DCS (tmux passthrough, terminal status reports), APC, PM and SOS. Nor do
 * CSI window operations (`t`: move, resize, report the title into the person's input).
 * Streaming: a sequence split across chunks is judged whole.
 */
const ESC = 0x1b;
const BEL = 0x07;
/** Longest CSI kept whole; a longer one is dropped (no real one comes close). */
const MAX_CSI = 256;

type State = 'text' | 'escape' | 'escape-intermediate' | 'csi' | 'string' | 'string-escape';

export class TerminalOutputFilter {
  private state: State = 'text';
  /** The escape or CSI sequence being read, kept until it is known to pass. */
  private pending: number[] = [];
  /** Whether the string being dropped is an OSC (BEL also ends it). */
  private osc = false;

  push(chunk: Uint8Array): Buffer {
    const out: number[] = [];
    for (const byte of chunk) this.step(byte, out);
    return Buffer.from(out);
  }

  private step(byte: number, out: number[]): void {
    switch (this.state) {
      case 'text':
        if (byte === ESC) this.begin(byte);
        else out.push(byte);
        return;
      case 'escape':
        this.pending.push(byte);
        if (byte === 0x5b) this.state = 'csi'; // [
        else if (byte === 0x5d || byte === 0x50 || byte === 0x58 || byte === 0x5e || byte === 0x5f) {
          // ] P X ^ _: OSC, DCS, SOS, PM, APC
          this.osc = byte === 0x5d;
          this.state = 'string';
          this.pending = [];
        } else if (byte >= 0x20 && byte <= 0x2f) this.state = 'escape-intermediate';
        else if (byte === ESC) this.begin(byte);
        else this.flush(out);
        return;
      case 'escape-intermediate':
        this.pending.push(byte);
        if (byte === ESC) this.begin(byte);
        else if (byte < 0x20 || byte > 0x2f) this.flush(out);
        return;
      case 'csi':
        this.pending.push(byte);
        if (byte >= 0x40 && byte <= 0x7e) {
          if (byte === 0x74) this.drop(); // t: window operations
          else this.flush(out);
        } else if (byte === ESC) this.begin(byte);
        else if (this.pending.length > MAX_CSI) this.drop();
        return;
      case 'string':
        if (byte === ESC) this.state = 'string-escape';
        else if (byte === BEL && this.osc) this.state = 'text';
        return;
      case 'string-escape':
        // ESC \ ends the string; any other ESC inside it is dropped with it.
        this.state = byte === 0x5c ? 'text' : 'string';
        return;
    }
  }

  private begin(byte: number): void {
    this.pending = [byte];
    this.state = 'escape';
  }

  private flush(out: number[]): void {
    out.push(...this.pending);
    this.drop();
  }

  private drop(): void {
    this.pending = [];
    this.state = 'text';
  }
}
