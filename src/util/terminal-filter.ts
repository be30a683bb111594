/**
 * What a terminal the container drew on may pass on to a person's terminal. Text, C0 controls
 * and CSI sequences (cursor, colours, erase, modes) pass; ESC sequences of two or three bytes
 * pass; the string sequences do not: OSC (clipboard writes with OSC 52, titles, hyperlinks,
 * colour queries), DCS (tmux passthrough, terminal status reports), APC, PM and SOS. Nor do
 * CSI window operations (`t`: move, resize, report the title into the person's input), nor
 * C1 controls written as UTF-8 (U+0080-U+009F: U+009B is CSI, U+009D OSC to a terminal that
 * honours them). Streaming: a sequence split across chunks is judged whole.
 */
const ESC = 0x1b;
const BEL = 0x07;
/** Longest CSI kept whole; a longer one is dropped (no real one comes close). */
const MAX_CSI = 256;

type State = 'text' | 'c2' | 'escape' | 'escape-intermediate' | 'csi' | 'string' | 'string-escape';

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
        else if (byte === 0xc2) this.state = 'c2';
        else out.push(byte);
        return;
      case 'c2':
        // 0xC2 0x80-0x9F is a C1 control: dropped. Anything else is text (or, not UTF-8, judged on its own).
        this.state = 'text';
        if (byte >= 0x80 && byte <= 0x9f) return;
        out.push(0xc2);
        this.step(byte, out);
        return;
      case 'escape':
        if (byte === 0x5b) {
          this.pending.push(byte);
          this.state = 'csi'; // [
        } else if (byte === 0x5d || byte === 0x50 || byte === 0x58 || byte === 0x5e || byte === 0x5f) {
          // ] P X ^ _: OSC, DCS, SOS, PM, APC
          this.osc = byte === 0x5d;
          this.state = 'string';
          this.pending = [];
        } else this.escapeByte(byte, out);
        return;
      case 'escape-intermediate':
        this.escapeByte(byte, out);
        return;
      case 'csi':
        if (byte < 0x20 || byte > 0x7e) {
          // Not part of a CSI (ESC, a control, a byte of a UTF-8 character): the unfinished one is dropped, the byte judged as text.
          this.drop();
          this.step(byte, out);
        } else if (byte >= 0x40) {
          this.pending.push(byte);
          if (byte === 0x74) this.drop(); // t: window operations
          else this.flush(out);
        } else {
          this.pending.push(byte);
          if (this.pending.length > MAX_CSI) this.drop();
        }
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

  /** A byte after ESC (and its intermediates): another intermediate, the final byte, or not part of it at all. */
  private escapeByte(byte: number, out: number[]): void {
    if (byte >= 0x20 && byte <= 0x2f) {
      this.pending.push(byte);
      this.state = 'escape-intermediate';
    } else if (byte >= 0x30 && byte <= 0x7e) {
      this.pending.push(byte);
      this.flush(out);
    } else {
      // ESC, a control or a byte of a UTF-8 character: the unfinished sequence is dropped (a terminal runs a control
      // inside an escape without leaving it, so ESC LF ] would be an OSC to it), and the byte is judged as text.
      this.drop();
      this.step(byte, out);
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
