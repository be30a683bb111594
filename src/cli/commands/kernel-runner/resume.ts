import { resolveInstance } from '../../../config/instance.js';
import { appendEvent } from '../../../observe/events/event-log.js';
import { tickEnvironmentParts } from '../../../runner/secrets/secrets.js';
import { credentialsRow } from '../../../runner/instances/doctor-rows.js';
import { readPausedReason, removePaused } from '../../../runner/tick/paused.js';
import { createLogger } from '../../../log/logger.js';
import { resumeSuspended } from '../../../snapshot/actions.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, out, err } from '../command.js';

const USAGE = 'resume <name-or-dir> [--force]';

export const resumeCommand: Command = {
  name: 'resume',
  summary: 'Let a paused instance tick again (removes the host\'s pause and system/paused; refused while Claude Code has no credentials for it, unless --force), and bring a suspended one back from its snapshot.',
  usage: USAGE,
  options: [
    ["--force", "resume even though Claude Code has no credentials"],
  ],
  examples: [
    "kernel-runner resume scout",
  ],
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, {
      usage: `kernel-runner ${USAGE}`,
      options: { force: { type: 'boolean', default: false } },
      positionals: { min: 1, max: 1 },
      missing: 'Name an instance.',
    });
    const instance = await resolveInstance(positionals[0] as string);
    const started = Date.now();
    const logger = createLogger({ process: 'resume', logDir: instance.paths.logs });
    const resumed = await resumeSuspended(instance, { logger, onProgress: (line) => err(`${line}\n`) });
    if (resumed) {
      out(
        `Resumed ${instance.name} from snapshot ${resumed.id} (suspended since ${resumed.suspended.at}) in ${((Date.now() - started) / 1000).toFixed(1)} s: its container is back with ${resumed.containerEntries} saved changes, checked against their digests.\n` +
          (resumed.terminals.length ? `Terminals lost to the restart (their scrollback is kept; login reports them): ${resumed.terminals.join('; ')}.\n` : ''),
      );
    }
    const reason = await readPausedReason(instance.paths);
    if (reason === undefined) {
      if (!resumed) out(`${instance.name} is neither paused nor suspended: nothing to do.\n`);
      return EXIT.OK;
    }
    if (!values.force && instance.config.runner.harness === 'claude-code') {
      const row = await credentialsRow(instance, { harnessCommand: instance.config.runner.command ?? 'claude', harnessFound: true, environment: () => tickEnvironmentParts(instance) });
      if (row.status === 'not-ready' || row.status === 'failed') {
        err(`kernel-runner resume: ${instance.name} stays paused: ${row.detail}.\nTo fix it:\n${(row.fix ?? '').split('\n').map((step) => `  ${step}`).join('\n')}\nthen run kernel-runner resume ${instance.name} again (--force resumes anyway).\n`);
        return EXIT.NOT_READY;
      }
    }
    await removePaused(instance.paths);
    await appendEvent(instance.paths.events, { type: 'instance.resumed', by: 'kernel-runner resume' });
    out(`Resumed ${instance.name} (it was paused: ${reason.split('\n')[0] ?? ''}). A running watch ticks again within seconds; without one: kernel-runner tick ${instance.name}\n`);
    return EXIT.OK;
  },
};
