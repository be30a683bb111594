import fs from 'node:fs';
import pino from 'pino';
import { RotatingLogFiles } from './rotating-files.js';
import { REDACT_PATHS, REDACTED, redactSecrets } from './secrets.js';

export { registerSecrets, clearSecrets, redactSecrets, REDACTED } from './secrets.js';

export type Logger = pino.Logger;

export interface LoggerOptions {
  /** The process's name: the log files are `<logDir>/<process>.log` and `<process>-current.log`. */
  process: string;
  /** Where to write rotating log files; none when absent. */
  logDir?: string;
  level?: string;
  /** Also write to stderr (default true). Never stdout: stdio MCP owns it. */
  stderr?: boolean;
}

/**
 * Where the lines go: registered secrets are replaced first, then each line is written
 * synchronously to stderr and to the rotating files. Synchronous so that the last lines
 * before a crash are not lost.
 */
class LogSink {
  constructor(
    private readonly toStderr: boolean,
    private readonly files: RotatingLogFiles | undefined,
  ) {}

  write(line: string): void {
    const safe = redactSecrets(line);
    if (this.toStderr) {
      try {
        fs.writeSync(2, safe);
      } catch {
        // stderr closed (the client went away): the files still get the line.
      }
    }
    this.files?.write(safe);
  }
}

/**
 * The one way to make a logger. Everything goes to stderr (never stdout, which the stdio
 * transport owns) and, given a logDir, to rotating files (see rotating-files.ts).
 * Token-like keys (`token`, `apiKey`, `authorization`...) and every value registered with
 * `registerSecrets` come out as [REDACTED].
 */
export function createLogger(options: LoggerOptions): Logger {
  const files = options.logDir ? new RotatingLogFiles({ dir: options.logDir, process: options.process }) : undefined;
  return pino(
    {
      name: options.process,
      level: options.level ?? process.env.AGENT_KERNEL_LOG_LEVEL ?? 'info',
      redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    },
    new LogSink(options.stderr !== false, files),
  );
}

/** A child logger for one terminal: its lines carry `tty: N`. */
export function ttyLogger(logger: Logger, tty: number): Logger {
  return logger.child({ tty });
}

/** A logger that drops everything, for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
