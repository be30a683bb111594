#!/usr/bin/env node
// `node dist/cli/mcp-tap.js <record-file> -- <command> [args...]`: the MCP server a harness starts
// when the runner cannot ask the harness itself whether our server connected (runner/session/mcp-tap.ts). It
// starts the real server and passes every byte both ways unchanged, and appends what the
// conversation shows to <record-file> (host-private): the client's initialize, the tools it
// listed, each tool call and its result, and the server's exit. Only node built-ins and a few small modules of ours, so it
// starts in a few tens of milliseconds.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { describeError } from '../errors.js';
import { type TapRecord, tapObserver } from '../runner/session/mcp-tap.js';
import { parseCommandArgs } from './commands/args.js';
import { EXIT, err } from './commands/command.js';

const USAGE = 'node dist/cli/mcp-tap.js <record-file> -- <command> [args...]';

/** The record file, then the server's command line: everything after `--` is the server's, its options included. */
function parseTapArgs(argv: readonly string[]): { recordFile: string; command: string; args: string[] } {
  const [recordFile, command, ...args] = parseCommandArgs(argv, { usage: USAGE, options: {}, positionals: { min: 2, max: Infinity } }).positionals as [string, string, ...string[]];
  return { recordFile, command, args };
}

let parsed: ReturnType<typeof parseTapArgs>;
try {
  parsed = parseTapArgs(process.argv.slice(2));
} catch (error) {
  err(`agent-kernel mcp-tap: ${describeError(error)}\n`);
  process.exit(EXIT.USAGE);
}
const { recordFile, command, args } = parsed;

function record(entry: TapRecord): void {
  try {
    appendFileSync(recordFile, JSON.stringify(entry) + '\n', { mode: 0o600 });
  } catch {
    // The runner reads what it can; the conversation itself must go on.
  }
}

const observe = tapObserver(record);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
child.on('error', (error) => {
  process.stderr.write(`mcp-tap: cannot start ${command}: ${error.message}\n`);
  record({ t: 'exit', at: Date.now(), code: 127, signal: null });
  process.exit(127);
});

process.stdin.on('data', (chunk: Buffer) => {
  child.stdin.write(chunk);
  observe.fromClient(chunk);
});
process.stdin.on('end', () => child.stdin.end());
child.stdin.on('error', () => {});
child.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  observe.fromServer(chunk);
});
process.stdout.on('error', () => {});

// The harness may stop its MCP server by signalling this process only: the server gets the same.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));

// 'close': the server exited and what it wrote last has been passed on.
child.on('close', (code, signal) => {
  record({ t: 'exit', at: Date.now(), code, signal });
  process.exit(code ?? 1);
});
