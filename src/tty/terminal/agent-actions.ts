import { type SentInput, typedLines } from '../../observe/echo.js';

/** What the agent did last on a terminal, for `wait` to decide when it is done. */
export interface PendingAction {
  kind: 'open' | 'type';
  at: number;
  /** Command-finished marks seen before the action. */
  endsBefore: number;
}

/** Inputs kept between two looks: an agent that types without ever looking gains nothing from more. */
const MAX_SENT = 64;

/**
 * What the agent did on a terminal: its last action until a wait settles it, and what it opened
 * or typed there since it last saw the terminal (the echo of its own keys is not news). Its
 * fields change only through its methods: a Tty shows it to others as Readonly.
 */
export class AgentActions {
  pending: PendingAction | undefined;
  /** Started as the kernel's bash with shell integration: its first prompt will carry marks. */
  integrated = false;
  /** What the agent typed since it last saw this terminal, in order. */
  sent: readonly SentInput[] = [];
  private openedSinceLook = false;
  private linesOf: { sent: readonly SentInput[]; lines: readonly string[] } | undefined;

  /** The lines typed since the agent last saw this terminal (their echo is not news); kept while `sent` is the same. */
  get typedLines(): readonly string[] {
    if (this.linesOf?.sent !== this.sent) this.linesOf = { sent: this.sent, lines: typedLines(this.sent) };
    return this.linesOf.lines;
  }

  /** The agent opened or typed into this terminal after it last saw it: what changed since may be its doing. */
  get actedSinceLook(): boolean {
    return this.openedSinceLook || this.sent.length > 0;
  }

  /** The agent opened it (`integrated`: the kernel's bash) or typed `sent` into it at `at`, after `endsBefore` command ends. */
  acted(kind: PendingAction['kind'], at: number, endsBefore: number, integrated: boolean, sent: SentInput | undefined): void {
    this.pending = { kind, at, endsBefore };
    if (kind === 'open') {
      this.integrated = integrated;
      this.openedSinceLook = true;
    }
    if (sent && this.sent.length < MAX_SENT) this.sent = [...this.sent, sent];
  }

  /** Nothing to report: what the agent started is over. */
  settled(): void {
    this.pending = undefined;
  }

  /** The agent is shown the terminal: nothing it did is pending or unseen any more. */
  looked(): void {
    this.pending = undefined;
    this.sent = [];
    this.openedSinceLook = false;
  }
}
