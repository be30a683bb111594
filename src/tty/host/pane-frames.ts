import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../util/package-root.js';

/**
 * The frames a pane reader in the container sends: every pane's bytes as tmux's `pipe-pane -O`
 * copies them (unescaped), each frame headed by the pane's number, the byte offset of its
 * first byte in that pane's stream, and its length, all big-endian:
 *
 *   u32 pane | u32 pipe | u64 offset | u32 length | length bytes
 *
 * `pipe` numbers the pipes opened on a pane: re-adoption closes a pane's pipe and opens a new
 * one in the same tmux command group as its capture (the capture holds every byte read before,
 * the new pipe every byte after), and frames an older pipe still had on its way are dropped.
 *
 * A frame fits one atomic write to a FIFO (PIPE_BUF, 4096 bytes), so the readers of several
 * panes can share one FIFO and one `docker exec` without interleaving.
 */
export const FRAME_HEADER_BYTES = 20;
export const MAX_FRAME_PAYLOAD = 4096 - FRAME_HEADER_BYTES;
/** Closed panes remembered (their framers' last frames dropped). */
const MAX_CLOSED_PANES = 1024;

/** The framer's code, read once. */
let framer: string | undefined;

/**
 * A writer of this format in Perl (Debian's perl-base, in every Debian image): assets/pane-framer.pl,
 * read from this install (never the data directory), its whole-line comments dropped and its lines
 * joined, for `perl -e` in a one-line tmux command. It reads the pane's bytes on stdin (`pipe-pane
 * -O`), takes the pane's and the pipe's numbers as arguments, and writes one frame per read.
 */
export function paneFramerPerl(): string {
  framer ??= readFileSync(path.join(packageRoot(), 'assets', 'pane-framer.pl'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .join(' ');
  return framer;
}

export interface PaneFrameEvents {
  /** A pane's next bytes, starting at `offset` in its stream (always the offset that was due). */
  output: [pane: number, offset: number, data: Buffer];
  /** The stream said something no honest reader says; nothing more is read from it. */
  broken: [reason: string];
}

/**
 * Reads the frames of one stream. The reader that writes them is the agent's program (root in
 * its container can replace it or write to its FIFO), so every count is checked before it is
 * used: a length past one atomic write, an offset that is not the next one due (a repeat, a
 * rewind or a jump), or a pane nobody follows breaks the stream for good, with a reason the
 * terminal can report. Nothing is trusted to size a buffer: at most one frame is held.
 */
export class PaneFrameDecoder extends EventEmitter<PaneFrameEvents> {
  /** The pipe followed and the next offset due, per pane. */
  private readonly next = new Map<number, { pipe: number; offset: number }>();
  /** Pipes opened on a pane whose number was not known yet (a new window): the first frame names it. */
  private readonly expected = new Set<number>();
  /** Panes whose window closed: their framers' last frames are dropped. */
  private readonly closed = new Set<number>();
  private dropped = 0;
  /** The start of a frame split across chunks (never more than one frame). */
  private held: Buffer | undefined;
  private brokenReason: string | undefined;

  get broken(): string | undefined {
    return this.brokenReason;
  }

  /** Expect `pane`'s bytes from pipe `pipe` from `offset` on (a new pipe starts at 0); older pipes' frames are dropped. */
  follow(pane: number, pipe: number, offset = 0): void {
    this.expected.delete(pipe);
    this.next.set(pane, { pipe, offset });
  }

  /**
   * Expect a new pipe, numbered `pipe` (never used before), on a pane not known yet: tmux opens a
   * window and its pipe in one command group, and the pane's first bytes may come before the reply
   * that names it. The first frame of that pipe binds it to its pane, from offset 0.
   */
  expect(pipe: number): void {
    this.expected.add(pipe);
  }

  /** The pipe `pipe` was not opened after all (the command failed). */
  unexpect(pipe: number): void {
    this.expected.delete(pipe);
  }

  /**
   * Stop expecting `pane` (its window closed). tmux lets a pane go only once its pipe has taken
   * every byte it held, so its framer may still send frames after this: they are dropped, not taken
   * for a lie (tmux never reuses a pane's number). Bounded: the oldest closed pane is dropped first.
   */
  forget(pane: number): void {
    if (this.next.delete(pane)) {
      this.closed.add(pane);
      if (this.closed.size > MAX_CLOSED_PANES) this.closed.delete(this.closed.values().next().value as number);
    }
  }

  /** The panes followed. */
  panes(): number[] {
    return [...this.next.keys()];
  }

  /** Bytes held of a frame not complete yet (at most one frame's). */
  get heldBytes(): number {
    return this.held?.length ?? 0;
  }

  /** Bytes the pane's stream has delivered so far (the next offset due). */
  offsetOf(pane: number): number | undefined {
    return this.next.get(pane)?.offset;
  }

  /** Bytes dropped because a pipe replaced since sent them (they are in the capture taken then). */
  get droppedBytes(): number {
    return this.dropped;
  }

  push(chunk: Buffer): void {
    if (this.brokenReason !== undefined) return;
    let data = chunk;
    if (this.held) {
      data = Buffer.concat([this.held, chunk]);
      this.held = undefined;
    }
    let at = 0;
    while (data.length - at >= FRAME_HEADER_BYTES) {
      const pane = data.readUInt32BE(at);
      const pipe = data.readUInt32BE(at + 4);
      const offset = data.readBigUInt64BE(at + 8);
      const length = data.readUInt32BE(at + 16);
      const problem = this.check(pane, pipe, offset, length);
      if (typeof problem === 'string') {
        this.breakWith(problem);
        return;
      }
      if (data.length - at < FRAME_HEADER_BYTES + length) break;
      const payload = data.subarray(at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + length);
      at += FRAME_HEADER_BYTES + length;
      if (problem === false) {
        this.dropped += length;
        continue;
      }
      const start = Number(offset);
      this.next.set(pane, { pipe, offset: start + length });
      if (length > 0) this.emit('output', pane, start, payload);
      if (this.brokenReason !== undefined) return;
    }
    if (at < data.length) this.held = Buffer.from(data.subarray(at));
  }

  /** Why a header cannot be from an honest reader; false: from a replaced pipe (skip it); undefined: read it. */
  private check(pane: number, pipe: number, offset: bigint, length: number): string | false | undefined {
    let followed = this.next.get(pane);
    if (this.expected.has(pipe) && (followed === undefined || followed.pipe < pipe)) {
      this.expected.delete(pipe);
      followed = { pipe, offset: 0 };
      this.next.set(pane, followed);
    }
    if (length > MAX_FRAME_PAYLOAD) return `a frame of ${length} bytes for pane %${pane} (at most ${MAX_FRAME_PAYLOAD})`;
    if (followed === undefined) return this.closed.has(pane) ? false : `a frame for pane %${pane}, which no terminal has`;
    if (pipe < followed.pipe) return false;
    if (pipe > followed.pipe) return `a frame from pipe ${pipe} of pane %${pane}, which was never opened (pipe ${followed.pipe} is)`;
    const due = followed.offset;
    if (offset !== BigInt(due)) {
      const said = offset.toString();
      return offset < BigInt(due)
        ? `pane %${pane}'s bytes from offset ${said} again (${due} were delivered)`
        : `pane %${pane}'s bytes from offset ${said}, skipping ${(offset - BigInt(due)).toString()} after the ${due} delivered`;
    }
    return undefined;
  }

  private breakWith(reason: string): void {
    this.brokenReason = reason;
    this.held = undefined;
    this.emit('broken', reason);
  }
}
