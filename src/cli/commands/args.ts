import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CodedError } from '../../errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Strict<O extends Options> = { args: string[]; options: O; allowPositionals: true; strict: true };

export interface ArgsSpec<O extends Options> {
  /** The whole command line to show, such as `agent-kernel ls <name-or-dir> [--json]`. */
  usage: string;
  options: O;
  /** How many positional arguments the command takes (default 0 to 0). */
  positionals?: { min?: number; max?: number };
  /** The sentence that leads the usage when too few positionals are given (default "Missing arguments."). */
  missing?: string;
}

/** A usage error: what was wrong, then the command line to run instead. */
export function usageError(usage: string, lead?: string): CodedError {
  return new CodedError('USAGE', `${lead ? `${lead} ` : ''}Usage: ${usage}`);
}

/** The option a node:util parseArgs error is about (`'--http <value>'` → `--http`). */
function optionIn(message: string): string {
  return /'(-[^' ]+)/.exec(message)?.[1] ?? 'an option';
}

/**
 * The one way commands read their arguments: node:util parseArgs, strict, with every mistake
 * worded the same way (what was wrong, then the usage line).
 */
export function parseCommandArgs<const O extends Options>(args: readonly string[], spec: ArgsSpec<O>): ReturnType<typeof parseArgs<Strict<O>>> {
  let parsed: ReturnType<typeof parseArgs<Strict<O>>>;
  try {
    parsed = parseArgs<Strict<O>>({ args: [...args], options: spec.options, allowPositionals: true, strict: true });
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw usageError(spec.usage, `Unknown option ${optionIn(message)}.`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const option = optionIn(message);
      throw usageError(spec.usage, /does not take an argument/.test(message) ? `${option} takes no value.` : `${option} needs a value.`);
    }
    throw error;
  }
  const { min = 0, max = 0 } = spec.positionals ?? {};
  const extra = parsed.positionals[max];
  if (extra !== undefined) throw usageError(spec.usage, `Unexpected argument ${JSON.stringify(extra)}.`);
  if (parsed.positionals.length < min) throw usageError(spec.usage, spec.missing ?? 'Missing arguments.');
  return parsed;
}
