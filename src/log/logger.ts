import pino from 'pino';

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
 * The one way to make a logger. Everything goes to stderr (never stdout, which the stdio
 * transport owns) and, given a logDir, to rotating files.
 * TODO(server issue): rotating files and secret redaction.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    { name: options.process, level: options.level ?? process.env.AGENT_KERNEL_LOG_LEVEL ?? 'info' },
    options.stderr === false ? pino.destination({ dest: '/dev/null' }) : pino.destination(2),
  );
}

/** A logger that drops everything, for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
