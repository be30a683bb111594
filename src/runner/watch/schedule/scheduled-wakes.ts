import { describeError } from '../../../errors.js';
import type { Logger } from '../../../log/logger.js';
import { type DueWake, type LoadedSchedule, type ScheduleFilePaths, loadSchedule, nextWake, removeFiredWake } from './schedule.js';

/** The schedule as watch read it before a tick, and its next wake (index into the file's wakes). */
export interface ScheduleLook {
  readonly loaded: LoadedSchedule;
  readonly due: DueWake | undefined;
}

/**
 * One watch's view of `schedule.json`: the file re-read at every look, the one-shot wakes this
 * process already fired (in case the file could not be rewritten), and the time from which
 * cron times count (a cron time missed while a tick ran fires once after it).
 */
export class ScheduledWakes {
  private cursor = new Date();
  private readonly firedOneShots = new Set<string>();
  private lastError: string | undefined;

  constructor(
    private readonly file: () => ScheduleFilePaths,
    private readonly log: Logger,
  ) {}

  /** Why the file was ignored at the last look, if it was. */
  get error(): string | undefined {
    return this.lastError;
  }

  /** The schedule and its next wake; undefined (logged once per distinct error) when the file cannot be used. */
  async read(): Promise<ScheduleLook | undefined> {
    try {
      const loaded = await loadSchedule(this.file());
      const usable = {
        ...loaded.schedule,
        wakes: loaded.schedule.wakes.filter((w) => !('at' in w && this.firedOneShots.has(`${w.at}\n${w.note}`))),
      };
      const due = nextWake(usable, this.cursor);
      // Indices refer to the file: map back from the filtered list.
      const index = due ? loaded.schedule.wakes.indexOf(usable.wakes[due.index]!) : -1;
      this.lastError = undefined;
      return { loaded, due: due ? { ...due, index } : undefined };
    } catch (error) {
      const message = describeError(error);
      if (message !== this.lastError) this.log.error({ err: error }, `schedule.json ignored: ${message}`);
      this.lastError = message;
      return undefined;
    }
  }

  /** A tick started for `wake`: a one-shot is removed from the file (and never fires again here); cron counts from now. */
  async fired(wake: DueWake, loaded: LoadedSchedule | undefined): Promise<void> {
    if (wake.kind === 'at') this.firedOneShots.add(`${wake.spec}\n${wake.note}`);
    if (loaded) await removeFiredWake(this.file(), loaded, wake).catch((error: unknown) => this.log.warn({ err: error }, 'could not remove the fired wake from schedule.json'));
    this.cursor = new Date();
  }

  /** The tick for a wake ended (started at `startedAt`, epoch ms): that wake is behind, even if the tick never started. */
  tickEnded(startedAt: number): void {
    this.cursor = new Date(Math.max(this.cursor.getTime(), startedAt));
  }
}
