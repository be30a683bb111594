import type { AdoptReport, CloseResult, OpenResult, ScreenSnapshot, TtyInfo, TypeInput, TypeResult, UntilSpec, WaitOptions, WaitResult } from '../../tty/api/types.js';

/** The instance's network policy, as login reports it. */
export interface NetworkSummary {
  policy: 'allowlist' | 'none' | 'open';
  /** How many destinations container.allow names (allowlist only). */
  allowed: number;
}

/** The id a wait's reply is known by until it is handed to the client (session and request). */
export function deliveryId(sessionId: string | undefined, requestId: string | number): string {
  return `${sessionId ?? 'stdio'}:${String(requestId)}`;
}

/**
 * What the MCP layer needs from the terminal layer: the TtyManager of one instance,
 * seen through the shapes of src/tty/api/types.ts. start-terminals.ts adapts the real
 * TtyManager to it; unit tests use a small fake.
 */
export interface Terminals {
  /** Where the terminals run, for people ("container agent-kernel-foo (docker 20.10.24)"). */
  readonly where: string;
  /** Why the terminals stopped working (tmux or the container went away under them), once they did. */
  readonly broken?: string | undefined;
  /** What start-up found: terminals re-adopted from tmux and terminals lost to a container restart. */
  readonly adoptReport: AdoptReport;
  /** Open a terminal: the lowest free number, or `tty` when given (startup.json names numbers). */
  open(options?: { command?: string; tty?: number; cwd?: string; until?: UntilSpec }): Promise<OpenResult>;
  type(input: TypeInput): Promise<TypeResult>;
  /**
   * Resolves early, without marking anything seen, when `signal` aborts. With `deliveryId`,
   * what it shows counts as seen for good once delivered(deliveryId) says the reply went out.
   * With `observe`, it reports what the agent has not seen and changes nothing (an observing session).
   */
  wait(options: WaitOptions): Promise<WaitResult>;
  /** The reply of the wait with this deliveryId was handed to the client. */
  delivered?(deliveryId: string): void;
  close(tty: number): Promise<CloseResult>;
  list(): Promise<TtyInfo[]>;
  readonly maxTtys: number;
  /** The tick login read from state.json (or the last one, between ticks), for archive and recording names (`tty_N-tick-NNN`). */
  setTick(tick: number, between?: boolean): void;
  /** The network policy, for login; absent on the host backend. */
  readonly network?: NetworkSummary | undefined;
  /** Lines for the next wait that are not terminal output (`network: refused ...`); each is returned once. */
  takeNotices?(): string[];
  /**
   * A terminal's screen and, from that instant, what it prints (TtyManager.watchScreen): how the
   * web view shows the terminals without an emulator of its own. Absent on fakes.
   */
  watchScreen?(tty: number, history: number, onOutput: (data: Buffer) => void, ended: (why: string) => void): Promise<{ screen: ScreenSnapshot; stop(): void }>;
  /** Keys a person typed (the web view with --write), byte for byte (TtyManager.typeAsPerson). */
  typeAsPerson?(tty: number, data: Buffer): Promise<number>;
  /** Detach from the terminals (they live on in tmux) and release the instance lock. */
  dispose(): Promise<void>;
}
