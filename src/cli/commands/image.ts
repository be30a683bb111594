import { parseArgs } from 'node:util';
import { KernelError } from '../../errors.js';
import { createLogger } from '../../log/logger.js';
import { DEFAULT_BASE_IMAGE, bootstrapBaseImage } from '../../sandbox/bootstrap.js';
import { connectEngine, describeEngine } from '../../sandbox/engine.js';
import { type Command, EXIT } from '../command.js';

const USAGE = 'image bootstrap [<tag>] [--force] [--mirror <url>]';

export const imageCommand: Command = {
  name: 'image',
  summary: 'Build base images offline (bootstrap) from Debian packages.',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { force: { type: 'boolean', default: false }, mirror: { type: 'string' } },
    });
    const [sub, tag, ...extra] = positionals;
    if (sub !== 'bootstrap' || extra.length > 0) {
      throw new KernelError('USAGE', `usage: agent-kernel ${USAGE}`);
    }
    const logger = createLogger({ process: 'agent-kernel', level: process.env.AGENT_KERNEL_LOG_LEVEL ?? 'warn' });
    const engine = await connectEngine();
    process.stdout.write(`engine: ${describeEngine(engine)}\n`);
    const started = Date.now();
    const result = await bootstrapBaseImage(engine, {
      tag: tag ?? DEFAULT_BASE_IMAGE,
      force: values.force,
      mirror: values.mirror,
      logger,
      onProgress: (line) => process.stdout.write(`  ${line}\n`),
    });
    if (!result.skipped) process.stdout.write(`${result.tag} imported in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    return EXIT.OK;
  },
};
