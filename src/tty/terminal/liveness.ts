/**
 * Whether a terminal's process lives, its exit status once it ended, and whether the agent was
 * told. The host may say the process ended before it knows the status: the terminal is then
 * `ending`, for a short grace in which the status may still come.
 */
export class Liveness {
  alive = true;
  exitCode: number | undefined;
  /** It died and no reply told the agent yet (a dead terminal is reported once, then closed). */
  unreported = false;
  /** When the host first said the terminal is dead but did not know its exit status yet. */
  private deadWithoutStatusSince: number | undefined;

  /** The host said the process ended and its status is still on its way: the terminal is ending. */
  get ending(): boolean {
    return this.alive && this.deadWithoutStatusSince !== undefined;
  }

  /**
   * The host says the process ended but has no status yet: true while it is worth waiting
   * a little longer for the status (`graceMs` from the first time it said so).
   */
  awaitingExitStatus(now: number, graceMs: number): boolean {
    this.deadWithoutStatusSince ??= now;
    return now - this.deadWithoutStatusSince < graceMs;
  }

  /** The process ended with `exitCode` (unknown: undefined); false when it had ended before. */
  died(exitCode: number | undefined): boolean {
    if (!this.alive) return false;
    this.alive = false;
    this.exitCode = exitCode;
    this.unreported = true;
    return true;
  }

  /** A reply told the agent. */
  reported(): void {
    this.unreported = false;
  }
}
