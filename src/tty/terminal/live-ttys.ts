import type { Tty } from './tty.js';
import { ttyNotOpen, ttyOutOfRange } from '../api/tty-errors.js';

/** Chunks kept for a terminal that is being opened or adopted, before it is registered. */
const EARLY_CHUNKS = 1000;

/**
 * The open terminals, by number and by host id, and the output that arrives for a terminal
 * before it is registered (a window being opened, a pane being adopted).
 */
export class LiveTtys {
  private readonly byNumber = new Map<number, Tty>();
  private readonly byId = new Map<string, Tty>();
  private readonly early = new Map<string, Buffer[]>();

  get size(): number {
    return this.byNumber.size;
  }

  has(number: number): boolean {
    return this.byNumber.has(number);
  }

  /** In number order. */
  all(): Tty[] {
    return [...this.byNumber.values()].sort((a, b) => a.number - b.number);
  }

  numbers(): number[] {
    return this.all().map((t) => t.number);
  }

  /** Feed bytes to their terminal; false when it is not registered yet (they are kept for it). */
  route(id: string, data: Buffer): boolean {
    const tty = this.byId.get(id);
    if (tty) {
      tty.onOutput(data);
      return true;
    }
    const early = this.early.get(id) ?? [];
    if (early.length < EARLY_CHUNKS) early.push(data);
    this.early.set(id, early);
    return false;
  }

  /** Output kept so far for `id` is already in a snapshot taken now. */
  forgetEarly(id: string): void {
    this.early.delete(id);
  }

  /** Register a terminal and replay what arrived for it before. */
  add(tty: Tty): void {
    this.byNumber.set(tty.number, tty);
    this.byId.set(tty.id, tty);
    const early = this.early.get(tty.id);
    this.early.delete(tty.id);
    for (const chunk of early ?? []) tty.onOutput(chunk);
  }

  remove(tty: Tty): void {
    this.byNumber.delete(tty.number);
    this.byId.delete(tty.id);
  }

  /**
   * The open terminal `number`. Any open terminal answers, also one adopted above a lowered
   * `tty.max_ttys` (it stays usable until closed); `max` only words the errors.
   */
  get(number: number, max: number): Tty {
    const tty = Number.isInteger(number) ? this.byNumber.get(number) : undefined;
    if (tty) return tty;
    if (!Number.isInteger(number) || number < 0 || number >= max) throw ttyOutOfRange(number, max);
    throw ttyNotOpen(number, this.numbers());
  }
}
