import type { Instance } from '../../config/instance.js';
import { EventLog } from '../../observe/events/event-log.js';
import { TerminalObserver } from '../../observe/terminal-observer.js';
import type { TtyManager } from '../../tty/tty-manager.js';

/** Cap of one terminal's recording in one tick, and of all recordings of the instance. */
const RECORDING_MAX_BYTES = 32 * 1024 * 1024;
const RECORDINGS_TOTAL_BYTES = 512 * 1024 * 1024;

/** Record every terminal (asciicast per tick) and log what happens on them, from the manager's events. */
export function recordTerminals(manager: TtyManager, instance: Instance, tick: number, between = false): TerminalObserver {
  const observer: TerminalObserver = new TerminalObserver({
    recordingsDir: instance.paths.recordings,
    events: new EventLog(instance.paths.events, (): number | undefined => observer.eventTick()),
    tick,
    between,
    maxRecordingBytes: RECORDING_MAX_BYTES,
    maxTotalBytes: RECORDINGS_TOTAL_BYTES,
    describe: (tty) => {
      const screen = manager.screenOf(tty);
      const command = manager.list().find((t) => t.tty === tty)?.command ?? '?';
      return screen && { command, cols: screen.cols, rows: screen.rows, screenAnsi: screen.ansi };
    },
  });
  // Elision notes point at the recording of the terminal (as the agent sees its path).
  manager.pointRecordings((tty) => observer.recordingPath(tty));
  const { events } = manager;
  events.onOutput(({ tty, data }) => observer.output(tty, data));
  events.onCommandStarted(({ tty, command }) => observer.commandStarted(tty, command));
  events.onCommandFinished(({ tty, exitCode, durationMs }) => observer.commandFinished(tty, exitCode, durationMs));
  events.onOpened(({ tty, command }) => observer.opened(tty, command));
  events.onClosed(({ tty, archivedTo }) => observer.closed(tty, archivedTo));
  events.onDied(({ tty, exitCode }) => observer.died(tty, exitCode));
  events.onWaitingForInput(({ tty, program }) => observer.waitingForInput(tty, program));
  return observer;
}
