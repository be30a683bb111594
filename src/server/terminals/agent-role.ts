/** A holder with no call in flight and none for this long has likely vanished (an HTTP client gone without DELETE). */
const ROLE_IDLE_MS = 5 * 60_000;

/**
 * Which MCP session is the agent's: the one whose waits mark output seen (and whose marks
 * survive a restart) and which may open, type and close. Every other logged-in session
 * observes: its waits show the same news and mark nothing, so watching steals nothing.
 * The role goes to the first session that logs in without asking to observe, and is free
 * again when that session ends or has been idle for ROLE_IDLE_MS; a login with
 * `observe: false` takes it over at once.
 */
export class AgentRole {
  private holder: object | undefined;
  /** Sessions of a tick's harness: each tick is the agent, whoever else is connected to the kernel. */
  private readonly ticks = new WeakSet<object>();
  private calls = 0;
  private lastActive = 0;
  /** Counts takings, so a call begun under an earlier holding does not count against this one. */
  private term = 0;

  constructor(
    private readonly idleMs = ROLE_IDLE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** `session` is a tick's harness: its login takes the role over from anyone (a person between ticks included). */
  preferTick(session: object): void {
    this.ticks.add(session);
  }

  /** Take the role if it is free or its holder idle (or always, with `takeOver`, or for a tick); true when `session` holds it now. */
  claim(session: object, takeOver: boolean): boolean {
    if (this.holder === undefined || takeOver || this.ticks.has(session) || this.holderIdle()) this.take(session);
    return this.holder === session;
  }

  holds(session: object): boolean {
    return this.holder === session;
  }

  /** A tool call of `session` starts; the returned function ends it. Keeps a thinking or waiting agent's role. */
  calling(session: object): () => void {
    if (this.holder !== session) return () => {};
    const term = this.term;
    this.calls += 1;
    this.lastActive = this.now();
    let ended = false;
    return () => {
      if (ended || this.term !== term) return;
      ended = true;
      this.calls -= 1;
      this.lastActive = this.now();
    };
  }

  /** The session ended or chose to observe. */
  release(session: object): void {
    if (this.holder !== session) return;
    this.holder = undefined;
    this.term += 1;
  }

  private holderIdle(): boolean {
    return this.calls === 0 && this.now() - this.lastActive >= this.idleMs;
  }

  private take(session: object): void {
    if (this.holder === session) return;
    this.holder = session;
    this.term += 1;
    this.calls = 0;
    this.lastActive = this.now();
  }
}
