import { describeError, isKernelError, type ErrorCode } from '../../errors.js';
import { type Command, EXIT, out, err } from './command.js';

const NOT_READY: ReadonlySet<ErrorCode> = new Set(['ENGINE_UNREACHABLE', 'BASE_IMAGE_MISSING', 'HARNESS_MISSING', 'INSTANCE_PAUSED']);
const USAGE: ReadonlySet<ErrorCode> = new Set(['USAGE', 'CONFIG_INVALID', 'CONFIG_REFUSED', 'INSTANCE_NOT_FOUND', 'INSTANCE_NAME_INVALID']);

/** Map an error to an exit code and print it for a person. */
export function exitCodeFor(error: unknown): number {
  if (isKernelError(error)) {
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
    `Run "${bin} <command> --help" for one command.`,
  ].join('\n');
}

/**
 * A bin's commands by name, each loaded only when it runs: `serve` must not pay for
 * loading the runner, nor `send` for the MCP SDK and the terminal emulator.
 */
export type CommandTable = Readonly<Record<string, () => Promise<Command>>>;

async function loadAll(commands: CommandTable): Promise<Command[]> {
  return Promise.all(Object.values(commands).map((load) => load()));
}

/** Dispatch argv to a command; print errors to stderr; set the exit code. */
export async function runCli(bin: string, commands: CommandTable, argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    out(help(bin, await loadAll(commands)) + '\n');
    process.exitCode = name ? EXIT.OK : EXIT.USAGE;
    return;
  }
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!load) {
    err(`${bin}: unknown command "${name}".\n\n${help(bin, await loadAll(commands))}\n`);
    process.exitCode = EXIT.USAGE;
    return;
  }
  const command = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    out(`usage: ${bin} ${command.usage}\n\n${command.summary}\n`);
    return;
  }
  try {
    process.exitCode = await command.run(rest);
  } catch (error) {
    err(`${bin} ${name}: ${describeError(error)}\n`);
    process.exitCode = exitCodeFor(error);
  }
}
