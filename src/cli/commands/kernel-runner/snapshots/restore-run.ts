import type { Instance } from '../../../../config/instance.js';
import { describeError } from '../../../../errors.js';
import { type Logger, createLogger } from '../../../../log/logger.js';
import { writePaused } from '../../../../runner/tick/paused.js';
import { err } from '../../command.js';

/**
 * What the commands that restore a snapshot (rollback, move) share: the instance's own log,
 * each step on stderr, the instance paused when the restore fails (with why and the command
 * that rolls back), and the words of the report.
 */
export function restoreRun(
  instance: Instance,
  command: 'rollback' | 'move',
  failed: (error: unknown, snapshot: string | undefined) => { why: string; next: string },
): { logger: Logger; onProgress(line: string): void; onFailed(error: unknown, snapshot?: string): Promise<void>; took(): string } {
  const started = Date.now();
  return {
    logger: createLogger({ process: command, logDir: instance.paths.logs }),
    onProgress: (line) => err(`${line}\n`),
    onFailed: async (error, snapshot) => {
      const { why, next } = failed(error, snapshot);
      await writePaused(instance.paths, `${why}: ${describeError(error)}`, undefined, [next]);
    },
    took: () => `${((Date.now() - started) / 1000).toFixed(1)} s`,
  };
}

/** The report's line on the terminals the restart ended (`none` when there were none). */
export function lostTerminalsLine(terminals: readonly string[], none: string): string {
  return terminals.length ? `Terminals lost to the restart (their scrollback is kept; login reports them): ${terminals.join('; ')}.\n` : `${none}\n`;
}
