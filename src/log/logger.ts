import fs from 'node:fs';
import pino from 'pino';
import { escapeControls } from '../util/control-chars.js';
import { type LogFormat, formatPretty, stderrFormat, wantsColor } from './pretty.js';
import { RotatingLogFiles } from './rotating-files.js';
import { REDACT_PATHS, REDACTED, SecretRedactor } from './secrets.js';

export { REDACTED } from './secrets.js';

export type Logger = pino.Logger;

export interface LoggerOptions {
  /** The process's name: the log files are `<logDir>/<process>.log` and `<process>-current.log`. */
  process: string;
  /** Where to write rotating log files; none when absent. */
  logDir?: string;
  level?: string;
  /** Also write to stderr (default true). Never stdout: stdio MCP owns it. */
  stderr?: boolean;
  /** What stderr gets (default: pretty.ts's stderrFormat: short lines on a terminal, JSON otherwise). Files always get JSON. */
  stderrFormat?: LogFormat;
}

/**
 * Where the lines go: registered secrets are replaced first, then each line is written
 * synchronously to stderr and to the rotating files. Synchronous so that the last lines
 * before a crash are not lost. A key given twice (a child logger's binding repeated in a
 * call) is written once, with the call's value.
 */
class LogSink {
  constructor(
    private readonly stderr: { format: LogFormat; color: boolean } | undefined,
    private readonly files: RotatingLogFiles | undefined,
    private readonly secrets: SecretRedactor,
  ) {}

  write(line: string): void {
    const redacted = this.secrets.redact(line);
    let record: Record<string, unknown> | undefined;
    try {
      record = JSON.parse(redacted) as Record<string, unknown>;
    } catch {
      // Not one JSON record (never from pino): passed on as it is, escaped below.
    }
    // pino escapes C0 controls but not C1 (a raw CSI in the agent's text would act on a `tail -f`).
    const json = escapeControls(record ? `${JSON.stringify(record)}\n` : redacted);
    if (this.stderr) {
      try {
        fs.writeSync(2, record && this.stderr.format === 'pretty' ? formatPretty(record, { color: this.stderr.color }) : json);
      } catch {
        // stderr closed (the client went away): the files still get the line.
      }
    }
    this.files?.write(json);
  }
}

/**
 * The one way to make a logger. Everything goes to stderr (never stdout, which the stdio
 * transport owns: short lines for a person on a terminal, JSON otherwise) and, given a
 * logDir, to rotating files as JSON (see rotating-files.ts).
 * Token-like keys (`token`, `apiKey`, `authorization`...) and every value registered with
 * `registerSecrets(logger, ...)` come out as [REDACTED].
 */
export function createLogger(options: LoggerOptions): Logger {
  const files = options.logDir ? new RotatingLogFiles({ dir: options.logDir, process: options.process }) : undefined;
  const secrets = new SecretRedactor();
  const logger = pino(
    {
      name: options.process,
      level: options.level ?? process.env.AGENT_KERNEL_LOG_LEVEL ?? 'info',
      redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    },
    new LogSink(
      options.stderr === false
        ? undefined
        : { format: options.stderrFormat ?? stderrFormat(process.env, process.stderr.isTTY === true), color: wantsColor(process.env) },
      files,
      secrets,
    ),
  );
  // Child loggers inherit it (pino children are prototype-linked to their parent).
  Object.defineProperty(logger, SECRETS, { value: secrets });
  return logger;
}

const SECRETS = Symbol('agent-kernel secrets');

/**
 * From now on `logger` (and its children) write [REDACTED] for these values. A value shorter
 * than MIN_SECRET_LENGTH throws: refuse it where it is loaded. A logger that writes nowhere
 * (silentLogger) needs none.
 */
export function registerSecrets(logger: Logger, values: Iterable<string>): void {
  const secrets = (logger as unknown as Record<symbol, SecretRedactor | undefined>)[SECRETS];
  if (secrets) secrets.add(values);
  else if (logger.level !== 'silent') throw new Error('registerSecrets: this logger was not made by createLogger, so it cannot redact');
}

/** A child logger for one terminal: its lines carry `tty: N`. */
export function ttyLogger(logger: Logger, tty: number): Logger {
  return logger.child({ tty });
}

/** A logger that drops everything, for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
