import { createLogger } from '../../../log/logger.js';
import { DEFAULT_BASE_IMAGE, bootstrapBaseImage } from '../../../sandbox/engine/bootstrap.js';
import { connectEngine, describeEngine } from '../../../sandbox/engine/engine.js';
import { parseCommandArgs, usageError } from '../args.js';
import { type Command, EXIT, finalText, out } from '../command.js';

const USAGE = 'image bootstrap [<tag>] [--force] [--mirror <url>]';

export const imageCommand: Command = {
  name: 'image',
  summary: 'Build a Debian base image offline with mmdebstrap (default debian:bookworm-slim), for engines that cannot pull one.',
  usage: USAGE,
  options: [
    ["--force", "rebuild even if the image exists"],
    ["--mirror URL", "the Debian mirror to bootstrap from"],
  ],
  examples: [
    "agent-kernel image bootstrap",
  ],
  async run(args) {
    const usage = `agent-kernel ${USAGE}`;
    const { values, positionals } = parseCommandArgs(args, {
      usage,
      options: { force: { type: 'boolean', default: false }, mirror: { type: 'string' } },
      positionals: { min: 1, max: 2 },
      missing: 'Name an action.',
    });
    const [sub, tag] = positionals;
    if (sub !== 'bootstrap') throw usageError(usage, `Unknown action ${JSON.stringify(sub)}.`);
    const logger = createLogger({ process: 'agent-kernel', level: process.env.AGENT_KERNEL_LOG_LEVEL ?? 'warn' });
    const engine = await connectEngine();
    out(`engine: ${describeEngine(engine)}\n`);
    const started = Date.now();
    const result = await bootstrapBaseImage(engine, {
      tag: tag ?? DEFAULT_BASE_IMAGE,
      force: values.force,
      mirror: values.mirror,
      logger,
      onProgress: (line) => out(`  ${finalText(line)}\n`),
    });
    if (!result.skipped) out(`${result.tag} imported in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    return EXIT.OK;
  },
};
