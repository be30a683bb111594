/** What a subscription returns: call dispose() to stop listening. */
export interface Disposable {
  dispose(): void;
}

export type Listener<T> = (event: T) => void;

/** A terminal's process ended (the terminal is reported once more by wait, then closed). */
export interface TtyDied {
  tty: number;
  exitCode?: number;
}

/** A shell-integrated command started, with its command line as the screen shows it ('' when unknown). */
export interface CommandStarted {
  tty: number;
  at: number;
  command: string;
}

export interface CommandFinished {
  tty: number;
  exitCode?: number;
  durationMs?: number;
  at: number;
}

/**
 * The terminals as a stream of typed events, for observers in this process (web view,
 * recordings, event stream). Each `onX` returns a Disposable. Listeners run synchronously
 * on the server's event loop: keep them short; an exception in one is logged, not raised.
 */
export interface TtyEvents {
  /** Raw bytes a terminal wrote, as they arrive (before the emulator has parsed them). */
  onOutput(listener: Listener<{ tty: number; data: Buffer }>): Disposable;
  /** A shell-integrated command started (OSC 133 C). */
  onCommandStarted(listener: Listener<CommandStarted>): Disposable;
  /** It finished (OSC 133 D, counted once its prompt is drawn), with its exit code. */
  onCommandFinished(listener: Listener<CommandFinished>): Disposable;
  onOpened(listener: Listener<{ tty: number; command: string }>): Disposable;
  /** Closed by close() or after wait reported its end; the scrollback was archived. */
  onClosed(listener: Listener<{ tty: number; archivedTo: string }>): Disposable;
  onDied(listener: Listener<TtyDied>): Disposable;
  /** wait() judged the terminal idle and waiting for keys (its prompt, a REPL, a full-screen program). */
  onWaitingForInput(listener: Listener<{ tty: number; program: string }>): Disposable;
}

class Emitter<T> {
  private readonly listeners = new Set<Listener<T>>();

  constructor(private readonly onError: (error: unknown) => void) {}

  on(listener: Listener<T>): Disposable {
    const own = (event: T) => listener(event);
    this.listeners.add(own);
    return { dispose: () => this.listeners.delete(own) };
  }

  fire(event: T): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.onError(error);
      }
    }
  }
}

/** The TtyManager's side: it fires, subscribers see only TtyEvents. */
export class TtyEventSource implements TtyEvents {
  readonly output: Emitter<{ tty: number; data: Buffer }>;
  readonly commandStarted: Emitter<CommandStarted>;
  readonly commandFinished: Emitter<CommandFinished>;
  readonly opened: Emitter<{ tty: number; command: string }>;
  readonly closed: Emitter<{ tty: number; archivedTo: string }>;
  readonly died: Emitter<TtyDied>;
  readonly waitingForInput: Emitter<{ tty: number; program: string }>;

  constructor(onError: (error: unknown) => void) {
    this.output = new Emitter(onError);
    this.commandStarted = new Emitter(onError);
    this.commandFinished = new Emitter(onError);
    this.opened = new Emitter(onError);
    this.closed = new Emitter(onError);
    this.died = new Emitter(onError);
    this.waitingForInput = new Emitter(onError);
  }

  onOutput = (l: Listener<{ tty: number; data: Buffer }>) => this.output.on(l);
  onCommandStarted = (l: Listener<CommandStarted>) => this.commandStarted.on(l);
  onCommandFinished = (l: Listener<CommandFinished>) => this.commandFinished.on(l);
  onOpened = (l: Listener<{ tty: number; command: string }>) => this.opened.on(l);
  onClosed = (l: Listener<{ tty: number; archivedTo: string }>) => this.closed.on(l);
  onDied = (l: Listener<TtyDied>) => this.died.on(l);
  onWaitingForInput = (l: Listener<{ tty: number; program: string }>) => this.waitingForInput.on(l);
}
