import { mkdir } from 'node:fs/promises';
import type { Instance } from '../../../config/instance.js';
import type { Logger } from '../../../log/logger.js';
import { appendEvent } from '../../../observe/events/event-log.js';
import { loadState } from '../../../state/runner-state.js';
import { noteTickStarted, syncTickLedger } from './tick-ledger.js';
import { type LimitHold, tickLimitHold } from './tick-limits.js';

/**
 * Watch asks before each tick whether the operator's limits (`runner.limits`) let it start
 * (tick-limits.ts, over the ticks of the last day in tick-ledger.ts). A limit reached is
 * logged and put in the event log once per hold, so `status`, `events` and the web view say
 * why the work waits and until when.
 */
export class TickGate {
  private told: string | undefined;

  constructor(private readonly logger: Logger) {}

  /** Watch started a tick: it counts from now on, whatever state.json says yet. */
  async started(instance: Instance, at: Date, tick: number | undefined): Promise<void> {
    await mkdir(instance.paths.privateState, { recursive: true, mode: 0o700 });
    await noteTickStarted(instance.paths.tickLedger, at, tick).catch((error: unknown) => this.logger.warn({ err: error }, 'the tick ledger cannot be written; limits count from state.json'));
  }

  async check(instance: Instance, now: number, waiting: number): Promise<LimitHold | undefined> {
    const state = await loadState(instance.paths.state);
    await mkdir(instance.paths.privateState, { recursive: true, mode: 0o700 });
    const recent = await syncTickLedger(instance.paths.tickLedger, state, now);
    const hold = tickLimitHold(instance.config.runner.limits, recent, now);
    if (!hold) {
      this.told = undefined;
      return undefined;
    }
    const key = `${hold.limit} ${hold.until}`;
    if (key !== this.told) {
      this.told = key;
      this.logger.warn({ limit: hold.limit, until: new Date(hold.until).toISOString(), waiting }, `a tick waits: ${hold.reason}`);
      await appendEvent(instance.paths.events, { type: 'tick.limited', limit: hold.limit, until: new Date(hold.until).toISOString(), waiting });
    }
    return hold;
  }
}
