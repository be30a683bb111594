import type { MailConfig } from '../config/agent-config.js';

/**
 * The operator's policy for messages between instances, as pure functions: a message from A to B
 * passes only when A's operator file lets A send to B (`mail.send_to`) and B's lets B take
 * messages from A (`mail.accept_from`). Both default to nobody. A reply to a message B received
 * from A needs no more: A chose to write to B (post-office.ts).
 */

export function names(list: readonly string[], name: string): boolean {
  return list.includes('*') || list.includes(name);
}

/** Why the operator's policy refuses `from` → `to`, or undefined when it allows it. */
export function pairRefusal(from: { name: string; mail: MailConfig }, to: { name: string; mail: MailConfig }): string | undefined {
  const sends = names(from.mail.send_to, to.name);
  const accepts = names(to.mail.accept_from, from.name);
  if (sends && accepts) return undefined;
  const missing = [
    ...(sends ? [] : [`"${to.name}" in mail.send_to of ${from.name}`]),
    ...(accepts ? [] : [`"${from.name}" in mail.accept_from of ${to.name}`]),
  ];
  return `the operator has not allowed ${from.name} to write to ${to.name} (it takes ${missing.join(' and ')}, in the operator's files)`;
}

/**
 * Messages an instance may send: a bucket of `perMinute` that refills continuously, so a burst
 * of that many goes at once and then one every 60/perMinute seconds.
 */
export class SendRate {
  private tokens: number;
  private at: number;

  constructor(
    private perMinute: number,
    now: number,
  ) {
    this.tokens = perMinute;
    this.at = now;
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.perMinute, this.tokens + ((now - this.at) * this.perMinute) / 60_000);
    this.at = now;
  }

  /** The operator may change the rate while watch runs. */
  setRate(perMinute: number, now: number): void {
    this.refill(now);
    this.perMinute = perMinute;
    this.tokens = Math.min(this.tokens, perMinute);
  }

  take(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** When the next message may go. */
  nextAt(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? now : now + Math.ceil(((1 - this.tokens) * 60_000) / this.perMinute);
  }
}
