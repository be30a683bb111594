import { EventEmitter } from 'node:events';
import { CodedError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import type { SandboxProcess } from '../../sandbox/sandbox.js';
import { decodeOctalEscapesInto } from './tmux-escape.js';

export interface ControlClientEvents {
  /** Raw bytes a pane wrote (`%output %<id> ...`). */
  output: [paneId: string, data: Buffer];
  windowClose: [windowId: string];
  /** The client ended (`%exit`, or the process went away). */
  exit: [reason: string];
}

interface PendingCommand {
  command: string;
  /** Replies still to come: tmux answers each command of a `;` group in its own block. */
  remaining: number;
  replies: string[][];
  atReply: (() => void) | undefined;
  resolve: (replies: string[][]) => void;
  reject: (error: Error) => void;
}

const NEWLINE = 0x0a;
const OUTPUT_PREFIX = Buffer.from('%output %');

/**
 * How often a paused client still reads what it holds. tmux 3.3 stops reading a pane only while
 * its write buffer to this client holds 512 bytes or more; when the pipe fills just as that
 * buffer ran low, tmux gets no chance to write again, queues the pane's output in its own
 * memory and reads on (in 3 to 11% of pauses under load: `bench/pause-hold.mjs`). A read now
 * and then lets it write: with tmux on the host, a program that ran on in a pause then wrote
 * 2.4-2.8 MB/s instead of 13-17 MB/s; through `docker exec` it made no difference measured.
 * Nothing is lost either way, and the server takes a trickle while paused.
 */
const NUDGE_MS = 200;

/**
 * The longest line held while its newline has not come. tmux's own lines are far shorter (a
 * history line joined by capture-pane is at most history_limit times the width); the agent is
 * root in its container and can put any program where tmux was, and one that never sends a
 * newline must not grow the host process without end.
 */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/**
 * One tmux control-mode client (`tmux -C attach`) over plain pipes. Every pane's output
 * of the session arrives on this one stream; commands go over the same stream and their
 * replies come back in order between `%begin` and `%end`/`%error`.
 */
export class TmuxControlClient extends EventEmitter<ControlClientEvents> {
  private readonly pending: PendingCommand[] = [];
  /** The unfinished line's pieces (joined once, when its newline comes). */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  /** Lines of the reply being read, and whether it is one of ours (flags 1). */
  private block: { lines: string[]; ours: boolean; tag: string } | undefined;
  private ended: string | undefined;
  private nudging: NodeJS.Timeout | undefined;
  /** Output decoded from the read being handled, not emitted yet. */
  private out: { buffer: Buffer; length: number; paneId: string | undefined } | undefined;

  constructor(
    private readonly process: SandboxProcess,
    private readonly logger: Logger,
  ) {
    super();
    process.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    process.stderr.on('data', (chunk: Buffer) => this.logger.debug({ stderr: chunk.toString() }, 'tmux control client stderr'));
    process.exited.then(
      (code) => this.end(`tmux control client exited (${code})`),
      (error: unknown) => this.end(`tmux control client failed: ${String(error)}`),
    );
  }

  get closed(): boolean {
    return this.ended !== undefined;
  }

  /** Run one tmux command; resolves with its output lines, rejects with TMUX_FAILED on `%error`. */
  async command(command: string): Promise<string[]> {
    const [reply] = await this.commands([command]);
    return reply ?? [];
  }

  /**
   * Run commands as one `;` group on one line: tmux runs them back to back, with no pane
   * output parsed in between. Resolves with each command's output lines. When one fails,
   * tmux skips the rest of the group and this rejects. `atReply` runs synchronously when
   * the reply ends, before any output that tmux sent after it is handled.
   */
  commands(commands: readonly string[], atReply?: () => void): Promise<string[][]> {
    const line = commands.join(' ; ');
    if (this.ended !== undefined) {
      return Promise.reject(new CodedError('TMUX_FAILED', `tmux is gone (${this.ended}); cannot run: ${line}`, { details: { gone: this.ended } }));
    }
    if (line.includes('\n')) throw new Error('a tmux control command must be one line');
    return new Promise((resolve, reject) => {
      this.pending.push({ command: line, remaining: commands.length, replies: [], atReply, resolve, reject });
      this.process.stdin.write(`${line}\n`);
    });
  }

  /** Detach: tmux keeps running, and so do the terminals. */
  close(): void {
    this.end('closed');
    this.process.close();
  }

  /** Stop reading tmux (true) until told to go on: tmux then stops reading the panes, and their programs wait. */
  throttle(paused: boolean): void {
    clearInterval(this.nudging);
    this.nudging = undefined;
    if (!paused) {
      this.process.stdout.resume();
      return;
    }
    this.process.stdout.pause();
    this.nudging = setInterval(() => this.process.stdout.read(), NUDGE_MS);
    this.nudging.unref();
  }

  /**
   * Consecutive `%output` lines of one pane in one read are decoded into one buffer and
   * emitted once: one emulator write and one file append per read, not per line. Pending
   * output is emitted before any other line is handled, so order is kept.
   */
  private onData(chunk: Buffer): void {
    const data = chunk;
    let start = 0;
    if (this.partialBytes > 0) {
      // Only the partial line is joined with the head of the chunk, not the whole chunk.
      const nl = chunk.indexOf(NEWLINE);
      if (nl < 0) {
        this.hold(chunk);
        return;
      }
      const line = Buffer.concat([...this.partial, chunk.subarray(0, nl)]);
      this.partial = [];
      this.partialBytes = 0;
      this.out = { buffer: Buffer.allocUnsafe(line.length + chunk.length), length: 0, paneId: undefined };
      this.onLine(line, 0, line.length);
      start = nl + 1;
    } else {
      this.out = { buffer: Buffer.allocUnsafe(chunk.length), length: 0, paneId: undefined };
    }
    for (;;) {
      const nl = data.indexOf(NEWLINE, start);
      if (nl < 0) break;
      this.onLine(data, start, nl);
      start = nl + 1;
    }
    this.emitOutput();
    this.out = undefined;
    if (start < data.length) this.hold(Buffer.from(data.subarray(start)));
  }

  /** Keep a piece of an unfinished line; past MAX_LINE_BYTES the client is not tmux, and ends. */
  private hold(piece: Buffer): void {
    this.partial.push(piece);
    this.partialBytes += piece.length;
    if (this.partialBytes <= MAX_LINE_BYTES) return;
    this.partial = [];
    this.partialBytes = 0;
    this.logger.error({ limit: MAX_LINE_BYTES }, 'the tmux control client sent a line longer than any tmux sends: closing it');
    this.end(`it sent more than ${MAX_LINE_BYTES} bytes without a newline, which tmux never does`);
    this.process.close();
  }

  private emitOutput(): void {
    const out = this.out;
    if (!out || out.paneId === undefined || out.length === 0) return;
    const bytes = out.buffer.subarray(0, out.length);
    const paneId = out.paneId;
    // The rest of the read decodes after these bytes, in the same buffer.
    out.buffer = out.buffer.subarray(out.length);
    out.length = 0;
    out.paneId = undefined;
    this.emit('output', paneId, bytes);
  }

  private onLine(data: Buffer, start: number, end: number): void {
    if (this.block && !(data[start] === 0x25 && this.isBlockEnd(this.block.tag, data, start, end))) {
      if (this.block.ours) this.block.lines.push(data.toString('utf8', start, end));
      return;
    }
    if (end - start > OUTPUT_PREFIX.length && data.compare(OUTPUT_PREFIX, 0, OUTPUT_PREFIX.length, start, start + OUTPUT_PREFIX.length) === 0) {
      const idStart = start + OUTPUT_PREFIX.length - 1;
      const space = data.indexOf(0x20, idStart);
      if (space < 0 || space > end) return;
      const paneId = data.toString('latin1', idStart, space);
      const out = this.out;
      if (!out) return;
      if (out.paneId !== undefined && out.paneId !== paneId) this.emitOutput();
      out.paneId = paneId;
      out.length += decodeOctalEscapesInto(data, space + 1, end, out.buffer, out.length);
      return;
    }
    this.emitOutput();
    const line = data.toString('utf8', start, end);
    const [keyword, ...rest] = line.split(' ');
    switch (keyword) {
      case '%begin':
        this.block = { lines: [], ours: rest[2] === '1', tag: ` ${rest[0]} ${rest[1]} ` };
        break;
      case '%end':
      case '%error': {
        const block = this.block;
        this.block = undefined;
        if (!block?.ours) break;
        const waiting = this.pending[0];
        if (!waiting) break;
        if (keyword === '%end') {
          waiting.replies.push(block.lines);
          waiting.remaining -= 1;
          if (waiting.remaining > 0) break;
          this.pending.shift();
          waiting.atReply?.();
          waiting.resolve(waiting.replies);
        } else {
          // tmux drops the rest of the group after an error: no more blocks will come for it.
          this.pending.shift();
          waiting.reject(
            new CodedError('TMUX_FAILED', `tmux refused "${waiting.command}": ${block.lines.join(' ') || 'no reason given'}`, {
              details: { command: waiting.command, reply: block.lines },
            }),
          );
        }
        break;
      }
      case '%window-close':
      case '%unlinked-window-close':
        if (rest[0]) this.emit('windowClose', rest[0]);
        break;
      case '%exit':
        this.end(rest.length > 0 ? `tmux said: ${rest.join(' ')}` : 'tmux ended the client');
        break;
      default:
        break;
    }
  }

  /** A reply ends with `%end` or `%error` carrying the same time and number as its `%begin`. */
  private isBlockEnd(tag: string, data: Buffer, start: number, end: number): boolean {
    const head = data.toString('latin1', start, Math.min(end, start + 8 + tag.length));
    return head.startsWith(`%end${tag}`) || head.startsWith(`%error${tag}`);
  }

  private end(reason: string): void {
    if (this.ended !== undefined) return;
    this.ended = reason;
    clearInterval(this.nudging);
    for (const waiting of this.pending.splice(0)) {
      waiting.reject(new CodedError('TMUX_FAILED', `tmux is gone (${reason}) before it answered: ${waiting.command}`, { details: { gone: reason } }));
    }
    this.emit('exit', reason);
  }
}
