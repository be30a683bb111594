/**
 * Which MCP session is the agent's: the one whose waits mark output seen (and whose marks
 * survive a restart) and which may open, type and close. Every other logged-in session
 * observes: its waits show the same news and mark nothing, so watching steals nothing.
 * The role goes to the first session that logs in without asking to observe, and is free
 * again when that session ends; a login with `observe: false` takes it over.
 */
export class AgentRole {
  private holder: object | undefined;

  /** Take the role if it is free (or always, with `takeOver`); true when `session` holds it now. */
  claim(session: object, takeOver: boolean): boolean {
    if (this.holder === undefined || takeOver) this.holder = session;
    return this.holder === session;
  }

  holds(session: object): boolean {
    return this.holder === session;
  }

  /** The session ended or chose to observe. */
  release(session: object): void {
    if (this.holder === session) this.holder = undefined;
  }
}
