import { describeError, isCodedError, type ErrorCode } from '../../errors.js';
import { type Command, EXIT, out, err } from './command.js';
import { COMMAND_NAMES, type BinName, type CommandName } from './command-names.js';
import { commandHelp, suggestCommand } from './help.js';
import { SERVER_VERSION as PACKAGE_VERSION } from '../../server/version.js';

const NOT_READY: ReadonlySet<ErrorCode> = new Set(['ENGINE_UNREACHABLE', 'BASE_IMAGE_MISSING', 'HARNESS_MISSING', 'INSTANCE_PAUSED']);
const USAGE: ReadonlySet<ErrorCode> = new Set(['USAGE', 'CONFIG_INVALID', 'CONFIG_REFUSED', 'INSTANCE_NOT_FOUND', 'INSTANCE_NAME_INVALID']);

/** Map an error to an exit code and print it for a person. */
export function exitCodeFor(error: unknown): number {
  if (isCodedError(error)) {
    if (USAGE.has(error.code)) return EXIT.USAGE;
    if (NOT_READY.has(error.code)) return EXIT.NOT_READY;
  }
  return EXIT.FAILED;
}

/**
 * The bin's help: each command's usage line and what it does. README.md's operator table
 * holds exactly these rows (test/integration/cli/readme-commands.test.ts).
 */
function help(bin: string, commands: readonly Command[]): string {
  return [
    `usage: ${bin} <command> [options]`,
    '',
    ...commands.flatMap((c) => [`  ${bin} ${c.usage}`, `      ${c.summary}`]),
    '',
    `Run "${bin} <command> --help" for one command's options and examples; "${bin} --version" for the version.`,
  ].join('\n');
}

/**
 * A bin's commands by name, each loaded only when it runs: `serve` must not pay for
 * loading the runner, nor `send` for the MCP SDK and the terminal emulator.
 */
export type CommandTable<B extends BinName> = Readonly<Record<CommandName<B>, () => Promise<Command>>>;

async function loadAll(commands: Readonly<Record<string, () => Promise<Command>>>): Promise<Command[]> {
  return Promise.all(Object.values(commands).map((load) => load()));
}

/** Dispatch argv to a command; print errors to stderr; set the exit code. */
export async function runCli<B extends BinName>(bin: B, commands: CommandTable<B>, argv: string[]): Promise<void> {
  const table: Readonly<Record<string, () => Promise<Command>>> = commands;
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    out(help(bin, await loadAll(table)) + '\n');
    process.exitCode = name ? EXIT.OK : EXIT.USAGE;
    return;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    out(`${bin} ${PACKAGE_VERSION}\n`);
    return;
  }
  const load = Object.hasOwn(table, name) ? table[name] : undefined;
  if (!load) {
    err(`${bin}: ${suggestCommand(bin, name, COMMAND_NAMES)}\n`);
    process.exitCode = EXIT.USAGE;
    return;
  }
  const command = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    out(commandHelp(bin, command));
    return;
  }
  try {
    process.exitCode = await command.run(rest);
  } catch (error) {
    err(`${bin} ${name}: ${describeError(error)}\n`);
    process.exitCode = exitCodeFor(error);
  }
}
