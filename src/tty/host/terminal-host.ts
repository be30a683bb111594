import type { EventEmitter } from 'node:events';
import type { TypedInput } from './keys.js';

/**
 * What holds the terminals' processes, below the TtyManager: a tmux server (tmux-host.ts,
 * persistent) or node-pty PTYs in this process (pty-host.ts, host backend without tmux;
 * the terminals end with the server). The manager keeps the emulators, what was seen and
 * the files; a host only runs terminals and streams their bytes.
 */
export interface TerminalHostEvents {
  /** Raw bytes a terminal wrote. */
  output: [id: string, data: Buffer];
  /** The host can no longer be driven (tmux's control client ended). */
  gone: [reason: string];
}

/** One terminal as its host sees it at one instant. */
export interface TerminalState {
  /** The TTY number. */
  number: number;
  /** The host's id for it (stable while it lives). */
  id: string;
  /** The terminal's first process (the shell, or the command). */
  pid: number;
  dead: boolean;
  exitStatus: number | undefined;
  /** Rows above the screen the host keeps (numbering starts at the oldest it still has). */
  historySize: number;
  cursorX: number;
  cursorY: number;
  alternateOn: boolean;
  /** The normal screen's cursor, saved while a full-screen program runs. */
  alternateSavedX: number;
  alternateSavedY: number;
  cols: number;
  rows: number;
  /** The slave device (/dev/pts/N), for stty. */
  device: string;
  /** The terminal's title, only its letters, digits and dashes (tmux; empty where the host keeps none). */
  title?: string;
  /** The foreground process group leader's name, as the host sees it. */
  command: string;
}

/** A terminal's contents at one instant, for re-adoption. */
export interface TerminalSnapshot {
  state: TerminalState;
  /** From the row asked for to the end (normal screen), or to the top of the screen (full-screen). */
  rows: string[];
  /** While a full-screen program runs: the saved normal screen and the alternate screen. */
  fullScreen?: { normalScreen: string[]; screen: string[] };
  /** When asked for: the same rows as plain text, one per screen row (not joined), from the oldest kept. */
  plainRows?: string[];
}

export interface RowsAt {
  historySize: number;
  historyLimit: number;
  windows: string[][];
}

export interface TerminalSpec {
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
  /** What the session registry records so people can attach (`{ tmuxSocket }`, or `{ persistent: false }`). */
  readonly registryFields: Readonly<Record<string, unknown>>;
  readonly closed: boolean;
  /**
   * Every terminal of TTYs 0-19, dead ones included until kill(). `atInstant` runs at the
   * instant described: output before it was emitted already, output after it was not.
   */
  terminals(atInstant?: () => void): Promise<TerminalState[]>;
  /**
   * Resolves once everything the terminals' programs had written when called has been emitted
   * as `output`. Absent: the host cannot tell (the pty backend).
   */
  fence?(): Promise<void>;
  /**
   * Present where a terminals() reply may come before output the host read earlier (tmux with pane
   * pipes): resolves once everything these terminals had written when listed has been emitted.
   */
  readonly catchUp?: (states: readonly TerminalState[]) => Promise<void>;
  /** Start a terminal for TTY `spec.number`; resolves with its id. */
  open(spec: TerminalSpec): Promise<string>;
  /** Type a key, literal text or a paste (bracketed when the program asked for it), then Enter if asked. */
  send(id: string, input: TypedInput, options: SendOptions): Promise<void>;
  /** Bytes exactly as a person's terminal sends them (keys, a paste), for the web view's typing. */
  sendBytes(id: string, data: Buffer): Promise<void>;
  resize(id: string, number: number, cols: number, rows: number): Promise<void>;
  /** Remove the terminal (its processes were killed already). */
  kill(id: string): Promise<void>;
  /**
   * A dead terminal's rows from `from` (the host's numbering) to the end, with colours, when
   * the host may hold output that never reached us; undefined when it cannot.
   */
  rowsFrom(id: string, from: number): Promise<string[] | undefined>;
  /**
   * Plain-text rows of the normal screen by the host's numbering (0: the oldest row it
   * keeps), one array per window (`from` to `to`, inclusive), with the history size and limit
   * at that instant: where rows a former server saw are now. undefined: the host cannot tell.
   */
  rowsAt(id: string, windows: ReadonlyArray<{ from: number; to: number }>): Promise<RowsAt | undefined>;
  /**
   * For re-adoption of a terminal that terminals() listed at start: its state and contents at
   * one instant, from row `from` (negative: above the screen; undefined: all history). Output
   * up to that instant is in the snapshot; `atInstant` runs before any later output is emitted.
   */
  snapshot(state: TerminalState, from: number | undefined, atInstant: () => void, options?: { plainRows?: boolean }): Promise<TerminalSnapshot>;
  /**
   * Stop reading the terminals' output (true) until told to go on (false): the emulators are
   * behind. The programs then wait on their terminals, as behind a slow real one.
   */
  throttle(paused: boolean): void;
  /** Let go: tmux keeps the terminals; PTYs end. */
  detach(): void;
}
