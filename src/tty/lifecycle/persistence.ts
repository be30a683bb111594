import { type TerminalRegistry, writeTerminalRegistry } from '../../state/terminal-registry.js';
import { describeError } from '../../errors.js';
import { type TtyState, saveSeenState } from '../seen/seen-store.js';
import type { Anchor } from '../seen/seen-marks.js';
import type { TtyContext } from '../terminal/tty-context.js';
import { SerialQueue } from '../../util/serial-queue.js';

/** How long output may flow before the seen state is saved again. */
const SAVE_DELAY_MS = 1000;

/**
 * What survives this server: the seen state (which terminals exist and what the agent saw
 * of each, server-private) and the session registry (for people: `ls`, `attach`).
 */
export class Persistence {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly saving = new SerialQueue();

  constructor(private readonly ctx: TtyContext) {}

  /** Save the seen state soon (output is flowing). */
  schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.saveState().catch((error: unknown) => this.ctx.logger.warn({ error: describeError(error) }, 'saving terminal state failed'));
    }, SAVE_DELAY_MS);
  }

  /**
   * Save what is true now. Saves land in the order they were asked for: two writes racing
   * (a reply's save and the output timer's) must not leave the older state on disk.
   */
  saveState(): Promise<void> {
    const ttys: TtyState[] = this.ctx.ttys.all().map((t) => ({
      tty: t.number,
      command: t.command,
      paneId: t.id,
      openedAt: t.openedAt,
      ...(t.statusKey === undefined ? {} : { statusKey: t.statusKey }),
      ...(t.commands.signed ? { signsMarks: true } : {}),
      ...(t.commands.runningSince === undefined ? {} : { commandStartedAt: t.commands.runningSince }),
      cols: t.emulator.cols,
      rows: t.emulator.rows,
      markRow: t.marks.mark.row,
      markHistory: t.marks.mark.history,
      markDigest: t.marks.mark.digest,
      scrollbackRows: Math.max(0, t.marks.hostRow(t.files.scrollbackRows)),
      ...(t.marks.shownMark ? { shown: t.marks.shownMark } : {}),
      ...withAnchor(t.marks.anchor(t.emulator)),
      ...(t.marks.untold ? { gone: t.marks.untold } : {}),
      ...(t.until ? { until: t.until.kind === 'prompt' ? { prompt: t.until.prompt } : { regex: t.until.source } } : {}),
    }));
    return this.saving.run(() => saveSeenState(this.ctx.paths.privateState, ttys));
  }

  async writeRegistry(): Promise<void> {
    const { ctx } = this;
    const registry: TerminalRegistry = {
      instance: ctx.instance.name,
      sandbox: ctx.sandbox.description,
      ...ctx.host.registryFields,
      updatedAt: new Date().toISOString(),
      ttys: ctx.ttys.all().map((t) => ({
        tty: t.number,
        command: t.command,
        program: t.program,
        alive: t.alive,
        ...(t.exitCode === undefined ? {} : { exitCode: t.exitCode }),
        openedAt: t.openedAt,
        dir: t.files.dir,
        ...(t.background.length > 0 ? { background: [...t.background] } : {}),
      })),
    };
    await writeTerminalRegistry(ctx.paths.terminalRegistry, registry);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

function withAnchor(anchor: Anchor | undefined): { anchor?: Anchor } {
  return anchor ? { anchor } : {};
}
