import type { EventEmitter } from 'node:events';
import type { TypedInput } from './keys.js';
import type { PaneInfo } from './tmux-server.js';

/**
 * What holds the terminals' processes, below the TtyManager: a tmux server (tmux-host.ts,
 * persistent) or node-pty PTYs in this process (pty-host.ts, host backend without tmux;
 * the terminals end with the server). The manager keeps the emulators, what was seen and
 * the files; a host only runs panes and streams their bytes.
 */
export interface TerminalHostEvents {
  /** Raw bytes a pane wrote. */
  output: [paneId: string, data: Buffer];
  /** The host can no longer be driven (tmux's control client ended). */
  gone: [reason: string];
}

export interface PaneSpec {
  number: number;
  /** A shell command line (run with `sh -c`). */
  shellLine: string;
  cwd: string;
  env: Readonly<Record<string, string>>;
  cols: number;
  rows: number;
}

/** What type() sends besides the input, and the program's modes that decide the bytes. */
export interface SendOptions {
  enter: boolean;
  /** The program asked for bracketed paste. */
  bracketed: boolean;
  /** The program asked for application cursor keys. */
  applicationCursor: boolean;
}

export interface TerminalHost extends EventEmitter<TerminalHostEvents> {
  /** Do the terminals outlive this process? */
  readonly persistent: boolean;
  /** For logs and the registry ("tmux 3.3a on socket agent-kernel", "node-pty"). */
  readonly description: string;
  readonly closed: boolean;
  /** Every pane of TTYs 0-19, dead ones included until kill(). */
  panes(): Promise<PaneInfo[]>;
  /** Start a pane for TTY `spec.number`; resolves with its id. */
  open(spec: PaneSpec): Promise<string>;
  /** Type a key, literal text or a paste (bracketed when the program asked for it), then Enter if asked. */
  send(paneId: string, input: TypedInput, options: SendOptions): Promise<void>;
  resize(paneId: string, number: number, cols: number, rows: number): Promise<void>;
  /** Remove the pane (its processes were killed already). */
  kill(paneId: string): Promise<void>;
  /**
   * A dead pane's rows from `from` (the host's numbering) to the end, with colours, when the
   * host may hold output that never reached us; undefined when it cannot.
   */
  rowsFrom(paneId: string, from: number): Promise<string[] | undefined>;
  /**
   * For re-adoption of a pane that panes() listed at start: its description and contents at
   * one instant (see TmuxHost.capture). `atReply` runs before any later output is handled.
   */
  capture(pane: PaneInfo, start: string, atReply: () => void): Promise<string[][]>;
  /** Let go: tmux keeps the terminals; PTYs end. */
  detach(): void;
}
