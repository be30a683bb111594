import { resolveInstance } from '../../../config/instance.js';
import { createLogger } from '../../../log/logger.js';
import { tickEnvironmentParts } from '../../../runner/secrets/secrets.js';
import { credentialsRow, pausedRow } from '../../../runner/instances/doctor-rows.js';
import { type CheckRow, preflight } from '../../../sandbox/container/preflight.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, finalText, out, err } from '../command.js';

const USAGE = 'doctor [<name-or-dir>] [--verbose]';

const MARK: Record<CheckRow['status'], string> = { ok: 'ok', 'not-ready': 'MISSING', failed: 'FAIL', skipped: 'skip' };

/** Pure: the rows as a table for a person. */
export function formatRows(rows: readonly CheckRow[]): string {
  const markOf = (row: CheckRow) => row.mark ?? MARK[row.status];
  const nameWidth = Math.max(...rows.map((r) => r.name.length));
  const markWidth = Math.max(...rows.map((r) => markOf(r).length));
  const indent = ' '.repeat(markWidth + nameWidth + 6);
  return rows
    .map((row) => {
      const detail = row.detail.split('\n').join(`\n${indent}`);
      const line = `  ${markOf(row).padEnd(markWidth)}  ${row.name.padEnd(nameWidth)}  ${detail}`;
      return row.fix ? `${line}\n${indent}fix: ${row.fix.split('\n').join(`\n${indent}     `)}` : line;
    })
    .join('\n');
}

/** Pure: 4 when a check failed, 3 when a set-up step is missing, else 0. */
export function doctorExitCode(rows: readonly CheckRow[]): number {
  if (rows.some((r) => r.status === 'failed')) return EXIT.CHECK_FAILED;
  if (rows.some((r) => r.status === 'not-ready')) return EXIT.NOT_READY;
  return EXIT.OK;
}

export const doctorCommand: Command = {
  name: 'doctor',
  summary: "Check that everything an instance needs is ready, Claude Code's credentials for ticks included; each failing row says how to fix it. Exit 0 ok, 2 usage or config error, 3 set-up not ready or paused, 4 a check failed.",
  usage: USAGE,
  options: [
    ["--verbose, -v", "every check with its detail"],
  ],
  examples: [
    "agent-kernel doctor demo",
    "agent-kernel doctor            # the machine only",
  ],
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, {
      usage: `agent-kernel ${USAGE}`,
      options: { verbose: { type: 'boolean', short: 'v', default: false } },
      positionals: { max: 1 },
    });
    const instance = positionals[0] === undefined ? undefined : await resolveInstance(positionals[0]);
    const logger = createLogger({ process: 'agent-kernel', level: process.env.AGENT_KERNEL_LOG_LEVEL ?? 'warn' });
    out(`agent-kernel doctor${instance ? ` ${instance.name} (${instance.dataDir})` : ''}\n`);
    const harnessCommand = (instance?.config.runner.harness === 'claude-code' ? instance.config.runner.command : undefined) ?? 'claude';
    const rows = await preflight(instance, {
      logger,
      onProgress: values.verbose ? (line) => err(`  | ${finalText(line)}\n`) : undefined,
      harnessCommand,
    });
    const harnessFound = rows.some((row) => row.name === 'claude code' && row.status === 'ok');
    rows.push(await credentialsRow(instance, { harnessCommand, harnessFound, environment: () => tickEnvironmentParts(instance) }));
    if (instance) rows.push(await pausedRow(instance));
    out(formatRows(rows) + '\n');
    const code = doctorExitCode(rows);
    if (code !== EXIT.OK) out(`\n${code === EXIT.NOT_READY ? 'Set-up is not complete' : 'A check failed'}: see the fix lines above.\n`);
    return code;
  },
};
