import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { CodedError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import type { Sandbox, SandboxProcess } from '../../sandbox/sandbox.js';
import { PaneFrameDecoder, paneFramerPerl } from './pane-frames.js';
import { quoteTmuxArgument } from './tmux-escape.js';

export interface PaneReaderEvents {
  /** Raw bytes a pane wrote, in order, each once. */
  output: [paneId: string, data: Buffer];
  /** Nothing more can be read from the panes: what the reader sent no honest reader sends, or it ended. */
  broken: [reason: string];
}

/** An OSC no program uses, written into a pane's terminal to learn that its bytes up to it have arrived. */
const FENCE_OSC = '\x1b]7737;ak-fence-';

/** How often a paused reader still takes what it holds (control-client.ts: NUDGE_MS). */
const NUDGE_MS = 200;

/**
 * Every pane's bytes, read the way tmux copies them to a `pipe-pane -O` command (unescaped, at
 * tmux's own speed) instead of through control mode's escapes: each pane's pipe runs the framer
 * (assets/pane-framer.pl), which writes the bytes as frames with their byte offsets into one FIFO
 * in the sandbox, and one long-lived `cat` streams that FIFO here. What arrives is the agent's to
 * forge (it is root in its container): PaneFrameDecoder checks every count, and the first lie
 * breaks the stream for good with a reason.
 */
export class PaneReader extends EventEmitter<PaneReaderEvents> {
  private readonly decoder = new PaneFrameDecoder();
  /** Pipe numbers are never reused, so that frames an older pipe still had on their way are told apart. */
  private lastPipe = 0;
  private closing = false;
  private nudging: NodeJS.Timeout | undefined;
  private readonly fences = new Map<string, { marker: Buffer; tail: Buffer; arrived: () => void; failed: () => void }>();

  private constructor(
    private readonly process: SandboxProcess,
    /** A shell in the sandbox that writes fence markers to panes' terminals (builtins only: no process per fence). */
    private readonly marker: SandboxProcess,
    private readonly fifo: string,
    logger: Logger,
  ) {
    super();
    marker.exited.then(
      () => this.failFences(),
      () => this.failFences(),
    );
    this.decoder.on('output', (pane, _offset, data) => this.onOutput(`%${pane}`, data));
    this.decoder.on('broken', (reason) => this.fail(`the pane reader in the container sent ${reason}`));
    process.stdout.on('data', (chunk: Buffer) => this.decoder.push(chunk));
    process.stderr.on('data', (chunk: Buffer) => logger.debug({ stderr: chunk.toString() }, 'pane reader stderr'));
    process.exited.then(
      (code) => this.fail(`the pane reader in the container ended (${code})`),
      (error: unknown) => this.fail(`the pane reader in the container failed: ${String(error)}`),
    );
  }

  /** A new FIFO (earlier servers' ones removed: their pipes are replaced at re-adoption) and its reader. */
  static async start(sandbox: Sandbox, socket: string, logger: Logger): Promise<PaneReader> {
    const prefix = `/tmp/agent-kernel-frames-${socket.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
    const fifo = `${prefix}-${randomBytes(6).toString('hex')}`;
    const made = await sandbox.run(['sh', '-c', 'rm -f "$1"-*; mkfifo -m 600 "$2"', 'sh', prefix, fifo], { timeoutMs: 20_000 });
    if (made.exitCode !== 0) {
      throw new CodedError('TMUX_FAILED', `Could not make the terminals' output FIFO ${fifo} in ${sandbox.description}: ${made.stderr.trim() || `exit ${made.exitCode}`}. Is /tmp writable there?`);
    }
    // Open for reading and writing: the stream never ends between two framers.
    const proc = await sandbox.spawn(['sh', '-c', 'exec cat 0<>"$1"', 'sh', fifo]);
    const marker = await sandbox.spawn(['sh', '-c', `while read -r dev token; do printf '${FENCE_OSC.replace('\x1b', '\\033')}%s\\007' "$token" > "$dev"; done`]).catch((error: unknown) => {
      proc.close();
      throw error;
    });
    return new PaneReader(proc, marker, fifo, logger);
  }

  get broken(): string | undefined {
    return this.decoder.broken;
  }

  /** A number for a new pipe, and the tmux command that opens it on `target` (the pane's bytes from now on). */
  openPipe(target: string): { pipe: number; command: string } {
    const pipe = ++this.lastPipe;
    // tmux expands #{pane_id} (and strftime: the framer holds no per-cent sign) before sh runs it.
    const shell = `exec perl -e '${paneFramerPerl()}' #{pane_id} ${pipe} > ${this.fifo}`;
    return { pipe, command: `pipe-pane -O -t ${target} ${quoteTmuxArgument(shell)}` };
  }

  /** A pipe whose pane is not known yet (a new window): its first frame names it. */
  expect(pipe: number): void {
    this.decoder.expect(pipe);
  }

  unexpect(pipe: number): void {
    this.decoder.unexpect(pipe);
  }

  /** Read `paneId`'s bytes from pipe `pipe` only: frames an older one still sends are in the capture taken with it. */
  follow(paneId: string, pipe: number): void {
    this.decoder.follow(paneNumber(paneId), pipe);
  }

  forget(paneId: string): void {
    this.decoder.forget(paneNumber(paneId));
  }

  /** The panes with a pipe of ours. */
  followed(): string[] {
    return this.decoder.panes().map((pane) => `%${pane}`);
  }

  /** Does `paneId` have a pipe of ours? */
  follows(paneId: string): boolean {
    return this.decoder.offsetOf(paneNumber(paneId)) !== undefined;
  }

  /**
   * The text to write into a pane's terminal, and a promise that resolves once it came back through
   * the pane's pipe: every byte the pane's programs wrote before it has arrived by then.
   */
  fence(paneId: string, device: string): Promise<void> {
    if (!/^\/dev\/[A-Za-z0-9/]+$/.test(device)) return Promise.reject(new Error(`not a terminal device: ${device}`));
    const token = randomBytes(8).toString('hex');
    const arrived = new Promise<void>((resolve, reject) => {
      this.fences.get(paneId)?.failed();
      this.fences.set(paneId, { marker: Buffer.from(`${FENCE_OSC}${token}\x07`), tail: Buffer.alloc(0), arrived: resolve, failed: () => reject(new Error('the fence writer ended')) });
    });
    this.marker.stdin.write(`${device} ${token}\n`);
    return arrived;
  }

  private failFences(): void {
    for (const fence of this.fences.values()) fence.failed();
    this.fences.clear();
  }

  /**
   * Stop reading (true) until told to go on: the framers then wait on the FIFO. A paused reader
   * still takes what it holds now and then (as the control client does): a program that goes on
   * printing through a pause is not judged quiet.
   */
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

  close(): void {
    clearInterval(this.nudging);
    this.closing = true;
    this.process.close();
    this.marker.close();
  }

  private onOutput(paneId: string, data: Buffer): void {
    const fence = this.fences.get(paneId);
    if (fence) {
      const seen = Buffer.concat([fence.tail, data]);
      if (seen.includes(fence.marker)) {
        this.fences.delete(paneId);
        fence.arrived();
      } else {
        fence.tail = Buffer.from(seen.subarray(Math.max(0, seen.length - fence.marker.length + 1)));
      }
    }
    this.emit('output', paneId, data);
  }

  private fail(reason: string): void {
    if (this.closing) return;
    clearInterval(this.nudging);
    this.closing = true;
    this.process.close();
    this.marker.close();
    this.emit('broken', reason);
  }
}

function paneNumber(paneId: string): number {
  return Number.parseInt(paneId.replace(/^%/, ''), 10);
}
