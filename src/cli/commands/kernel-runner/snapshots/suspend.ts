import { resolveInstance } from '../../../../config/instance.js';
import { createLogger } from '../../../../log/logger.js';
import { suspendInstance } from '../../../../snapshot/actions.js';
import { formatBytes } from '../../../../snapshot/budget.js';
import { parseCommandArgs } from '../../args.js';
import { type Command, EXIT, err, out } from '../../command.js';

const USAGE = 'suspend <name>';

export const suspendCommand: Command = {
  name: 'suspend',
  summary: 'Save an instance in a snapshot and remove its container (an idle agent then costs disk only); its next tick (a message, a wake) or kernel-runner resume brings it back as it was.',
  usage: USAGE,
  examples: ['kernel-runner suspend scout', 'kernel-runner resume scout   # or: kernel-runner send scout "back to work"'],
  async run(args) {
    const { positionals } = parseCommandArgs(args, { usage: `kernel-runner ${USAGE}`, options: {}, positionals: { min: 1, max: 1 }, missing: 'Name an instance.' });
    const instance = await resolveInstance(positionals[0] as string);
    const logger = createLogger({ process: 'suspend', logDir: instance.paths.logs });
    const started = Date.now();
    const manifest = await suspendInstance(instance, { logger, onProgress: (line) => err(`${line}\n`) });
    out(
      `Suspended ${instance.name} in ${((Date.now() - started) / 1000).toFixed(1)} s: its container is saved in snapshot ${manifest.id} (${formatBytes(manifest.bytes)}, ${formatBytes(manifest.newBytes)} new on disk) and removed.\n` +
        `Nothing starts a fresh container for it meanwhile. Its next tick (a message, a wake under watch) or kernel-runner resume ${instance.name} brings it back as it was; terminals' programs do not survive (their scrollback does).\n`,
    );
    return EXIT.OK;
  },
};
