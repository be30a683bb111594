/**
 * The contract between the terminal layer (`src/tty`, `src/observe`) and the MCP server
 * (`src/server`). The server wraps a `TtyManager` (see tty-manager.ts) whose methods
 * take and return these shapes; nothing here knows about MCP.
 */

export const MAX_TTYS = 20;
/** Under the 60 s request timeout of the TypeScript SDK and of clients built on it (a longer wait needs a second call). */
export const MAX_WAIT_SECONDS = 50;

export interface Capacity {
  used: number;
  max: number;
}

export interface OpenResult {
  tty: number;
  command: string;
  capacity: Capacity;
}

export interface TypeInput {
  tty: number;
  /** The program the agent believes is in the foreground ("bash", "python3", "vim"). */
  expect: string;
  /** Literal text, or one key name ("C-c", "Enter", "Up", "F5"...). */
  text: string;
  /** Press Enter after literal text (default true). Never added after a key name. */
  enter?: boolean;
}

export interface TypeResult {
  tty: number;
  /** What was sent: "text", "paste" (multi-line), or "key". */
  sent: 'text' | 'paste' | 'key';
  /** The key's name when one key was sent ("C-c"). */
  key?: string;
  bytes: number;
  /** Enter was pressed after the text (twice after a paste that ends inside a REPL block). */
  enter: boolean;
}

/** Why a `wait` returned. */
/** What ends a wait on a program the kernel cannot judge (gdb, a custom REPL): exactly one of the two. */
export interface UntilSpec {
  /** The program's prompt, exactly (`(gdb)`): matched at the cursor, at the end of what it printed. */
  prompt?: string;
  /** A JavaScript regular expression, matched against the new output (or a full-screen program's screen). */
  regex?: string;
}

/** A wait, as the server asks for it (the tool's seconds become milliseconds once, where the call comes in). */
export interface WaitOptions {
  /** The most it waits; capped at MAX_WAIT_SECONDS. */
  timeoutMs: number;
  /** Ends the wait early, marking nothing seen (the client cancelled or went away). */
  signal?: AbortSignal;
  /** What it shows counts as seen for good once the reply with this id went out (see TtyManager.delivered). */
  deliveryId?: string;
  /** End the wait when this terminal shows the prompt or matches the regex. */
  until?: UntilSpec & { tty: number };
  /** Report what the agent has not seen and change nothing (an observing session). */
  observe?: boolean;
}

export type WaitReason =
  | 'command-finished' // a shell-integration mark (OSC 133 D) came
  | 'exited' // the terminal's process ended
  | 'settled' // no output for settle_ms (programs without marks)
  | 'timeout' // the timeout passed with output still flowing or a command still running
  | 'idle' // nothing was running and nothing changed
  | 'input' // a program drew and now waits for input (a prompt, a REPL, an editor)
  | 'matched'; // a terminal's new output matched the wait's or the terminal's prompt/regex

export interface TtyReport {
  tty: number;
  /** The foreground program, as `type`'s expect would name it. */
  program: string;
  alive: boolean;
  /** Exit code of the command that finished (OSC 133) or of the terminal's process if it ended. */
  exitCode?: number;
  /** Duration of that command, when shell integration measured it. */
  durationMs?: number;
  /** true when `text` is the whole screen: a full-screen program (alternate screen), or one that redrew the normal screen. */
  fullScreen: boolean;
  /** New lines since the agent last looked (or the screen), already elided to head and tail. */
  text: string;
  /** How many new lines there were in all, and how many of them `text` leaves out. */
  totalLines: number;
  elidedLines: number;
  /** Where the full text is (absolute paths as the agent sees them: inside the container, or on the host backend the host's). */
  files: { scrollback: string; screen: string };
  /** Set when the terminal was closed and archived by this wait (its process had ended). */
  archivedTo?: string;
}

export interface WaitResult {
  reason: WaitReason;
  /** With reason `input`: the terminal whose program waits, and the prompt it shows (empty for a full-screen program). */
  input?: { tty: number; prompt: string };
  /** With reason `matched`: the terminal and the text that matched. */
  matched?: { tty: number; text: string };
  elapsedMs: number;
  /** Only terminals with something new, or whose state changed. */
  changed: TtyReport[];
  /** Every open terminal, briefly: number and program. */
  open: Array<{ tty: number; program: string; alive: boolean }>;
}

export interface CloseResult {
  tty: number;
  archivedTo: string;
  /** The processes close ended (the shell, its jobs, and any that left its session). */
  ended?: Array<{ pid: number; name: string }>;
  capacity: Capacity;
}

export interface LostTty {
  tty: number;
  command: string;
  /** Where its last scrollback was kept (`scrollback.prev`). */
  scrollbackPrev: string;
}

export interface TtyInfo {
  tty: number;
  command: string;
  program: string;
  alive: boolean;
  exitCode?: number;
  unseenLines: number;
  lastActivity: string;
  cols: number;
  rows: number;
}

export interface AdoptReport {
  /** Terminals found alive in tmux and re-attached. */
  adopted: number[];
  /** Terminals the state said existed but tmux no longer has (container restarted). */
  lost: LostTty[];
  persistent: boolean;
}

/** A terminal's screen as its emulator holds it: written to a reset terminal of that size, `ansi` draws the same. */
export interface ScreenSnapshot {
  cols: number;
  rows: number;
  /** The screen (and the lines asked for above it) as escape sequences, colours and modes included. */
  ansi: string;
}
