import { EventEmitter } from 'node:events';
import type { IPty, IPtyForkOptions } from 'node-pty';
import { CodedError } from '../../errors.js';
import { type TypedInput, keyBytes } from './keys.js';
import type { SendOptions, TerminalHost, TerminalHostEvents, TerminalSnapshot, TerminalSpec, TerminalState, RowsAt } from './terminal-host.js';

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

/** An OSC the emulator ignores: the wrapper's last output, proof that we read everything before it. */
const DRAINED = Buffer.from('\x1b]7717;agent-kernel-drained\x07');

/**
 * node-pty destroys its reader 200 ms after the child exits, losing output still unread
 * when this process is busy (20 terminals printing at once). So the child does not exit by
 * itself: after the terminal's command line ends, a wrapper prints DRAINED and waits; once
 * DRAINED is read (all output before it was too), it gets SIGUSR1 and exits with the status.
 */
const WRAPPER = [
  'sh -c "$1"; status=$?',
  `trap 'kill $! 2>/dev/null; exit '"$status" USR1`,
  `printf '\\033]7717;agent-kernel-drained\\007'`,
  'while :; do sleep 1 & wait $!; done',
].join('\n');

interface PtyPane {
  number: number;
  pty: IPty;
  /** The slave device (/dev/pts/N), for stty. */
  device: string;
  cols: number;
  rows: number;
  exit: { status: number } | undefined;
}

/**
 * The terminals as PTYs of this process (node-pty), for the host backend on a machine
 * without tmux: the same terminals, but they end when this server ends (not persistent).
 */
export class PtyHost extends EventEmitter<TerminalHostEvents> implements TerminalHost {
  readonly persistent = false;
  readonly description = 'node-pty PTYs in the server process (not persistent)';
  readonly registryFields = { persistent: false };
  private readonly byId = new Map<string, PtyPane>();
  private serial = 0;
  private detached = false;
  private paused = false;

  private constructor(private readonly spawnPty: (file: string, args: string[], options: IPtyForkOptions) => IPty) {
    super();
  }

  /** node-pty is a native module: load it only when this host is used. */
  static async start(): Promise<PtyHost> {
    const { default: nodePty } = await import('node-pty');
    return new PtyHost(nodePty.spawn);
  }

  get closed(): boolean {
    return this.detached;
  }

  terminals(atInstant?: () => void): Promise<TerminalState[]> {
    // Every byte a PTY wrote was emitted as it was read: now is the instant.
    atInstant?.();
    return Promise.resolve([...this.byId.entries()].map(([paneId, pane]) => describe(paneId, pane)));
  }

  open(spec: TerminalSpec): Promise<string> {
    const env: Record<string, string> = { ...(process.env as Record<string, string>), ...spec.env, TERM: 'xterm-256color' };
    delete env.TMUX;
    delete env.TMUX_PANE;
    const pty = this.spawnPty('/bin/sh', ['-c', WRAPPER, 'sh', spec.shellLine], {
      name: 'xterm-256color',
      cols: spec.cols,
      rows: spec.rows,
      cwd: spec.cwd,
      env,
      // Raw bytes: the emulator decodes them, and the raw log keeps them as they came.
      encoding: null,
    });
    const paneId = `pty${++this.serial}`;
    const device = (pty as IPty & { ptsName?: string }).ptsName ?? '';
    const pane: PtyPane = { number: spec.number, pty, device, cols: spec.cols, rows: spec.rows, exit: undefined };
    this.byId.set(paneId, pane);
    let tail = Buffer.alloc(0);
    pty.onData((chunk: string | Buffer) => {
      const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      // The marker may arrive split over two chunks.
      const seen = Buffer.concat([tail, data]);
      if (seen.includes(DRAINED)) killQuietly(pty, 'SIGUSR1');
      tail = seen.subarray(Math.max(0, seen.length - DRAINED.length + 1));
      this.emit('output', paneId, data);
    });
    if (this.paused) pty.pause();
    // node-pty reports the exit once the pty's output has been read.
    pty.onExit(({ exitCode, signal }) => {
      pane.exit = { status: signal ? 128 + signal : exitCode };
    });
    return Promise.resolve(paneId);
  }

  send(paneId: string, input: TypedInput, options: SendOptions): Promise<void> {
    const pane = this.pane(paneId);
    let data: string;
    if (input.kind === 'key') data = keyBytes(input.key, options.applicationCursor);
    else if (input.kind === 'text') data = input.text + (options.enter ? '\r' : '');
    else {
      // As a terminal pastes: newlines as carriage returns, bracketed when the program asked.
      const text = input.text.replace(/\n/g, '\r');
      data = (options.bracketed ? `${PASTE_START}${text}${PASTE_END}` : text) + (options.enter ? '\r' : '');
    }
    if (data && !pane.exit) pane.pty.write(data);
    return Promise.resolve();
  }

  sendBytes(paneId: string, data: Buffer): Promise<void> {
    const pane = this.pane(paneId);
    if (data.length > 0 && !pane.exit) pane.pty.write(data);
    return Promise.resolve();
  }

  resize(paneId: string, _number: number, cols: number, rows: number): Promise<void> {
    const pane = this.pane(paneId);
    if (!pane.exit) pane.pty.resize(cols, rows);
    pane.cols = cols;
    pane.rows = rows;
    return Promise.resolve();
  }

  kill(paneId: string): Promise<void> {
    const pane = this.byId.get(paneId);
    this.byId.delete(paneId);
    if (pane && !pane.exit) hangUp(pane.pty);
    return Promise.resolve();
  }

  /** Nothing is lost between a PTY and us: the emulator has every byte. */
  rowsFrom(): Promise<string[] | undefined> {
    return Promise.resolve(undefined);
  }

  rowsAt(): Promise<RowsAt | undefined> {
    return Promise.resolve(undefined);
  }

  snapshot(): Promise<TerminalSnapshot> {
    return Promise.reject(new CodedError('INTERNAL', 'PTY terminals end with their server: there is nothing to re-adopt.'));
  }

  /** The terminals end with us: hang up on every one. */
  throttle(paused: boolean): void {
    this.paused = paused;
    for (const pane of this.byId.values()) {
      if (pane.exit) continue;
      if (paused) pane.pty.pause();
      else pane.pty.resume();
    }
  }

  detach(): void {
    this.detached = true;
    for (const pane of this.byId.values()) if (!pane.exit) hangUp(pane.pty);
    this.byId.clear();
  }

  private pane(paneId: string): PtyPane {
    const pane = this.byId.get(paneId);
    if (!pane) throw new CodedError('TTY_NOT_FOUND', `The terminal's PTY (${paneId}) is gone. Open a new terminal with open().`);
    return pane;
  }
}

/** A PTY's state; history and cursor are the emulator's business here. */
function describe(id: string, pane: PtyPane): TerminalState {
  let command = '';
  if (!pane.exit) {
    try {
      command = pane.pty.process;
    } catch {
      // The pty closed between the exit and its event.
    }
  }
  return {
    number: pane.number,
    id,
    pid: pane.pty.pid,
    dead: pane.exit !== undefined,
    exitStatus: pane.exit?.status,
    historySize: 0,
    cursorX: 0,
    cursorY: 0,
    alternateOn: false,
    alternateSavedX: 0,
    alternateSavedY: 0,
    cols: pane.cols,
    rows: pane.rows,
    device: pane.device,
    command,
  };
}

/** Close our end, as a terminal that goes away: the kernel hangs up on every process of the terminal. */
function hangUp(pty: IPty): void {
  const destroy = (pty as IPty & { destroy?: () => void }).destroy;
  if (!destroy) return killQuietly(pty, 'SIGHUP');
  try {
    destroy.call(pty);
  } catch {
    // Already gone.
  }
}

function killQuietly(pty: IPty, signal: string): void {
  try {
    pty.kill(signal);
  } catch {
    // Already gone.
  }
}
