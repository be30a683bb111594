import { type Instance, resolveInstance } from '../../../config/instance.js';
import { createLogger } from '../../../log/logger.js';
import { type ContainerStatus, containerDown, containerRebuild, containerStatus, containerUp, prune } from '../../../sandbox/container/container.js';
import { type Engine, connectEngine, describeEngine, engineSetting } from '../../../sandbox/engine/engine.js';
import { imageTag } from '../../../sandbox/engine/image.js';
import { removeInstanceResources } from '../../../sandbox/container/remove-instance.js';
import { parseCommandArgs, usageError } from '../args.js';
import { type Command, EXIT, finalText, out } from '../command.js';

const USAGE = 'container up|status|down|rebuild|prune|rm <name-or-dir> [--json] [--quiet]';
const ACTIONS = ['up', 'status', 'down', 'rebuild', 'prune', 'rm'] as const;
type Action = (typeof ACTIONS)[number];

/** Pure: a status as lines for a person. */
export function formatStatus(instance: Instance, status: ContainerStatus, engine: Engine): string {
  const image = imageTag(instance.name, status.currentImageHash);
  if (!status.exists) {
    return [`${status.name}: not created`, `  image:  ${image}`, `  engine: ${describeEngine(engine)}`, `Start it with: agent-kernel container up ${instance.name}`].join('\n');
  }
  const lines = [
    `${status.name}: ${status.state ?? 'unknown'}${status.running && status.startedAt ? ` since ${status.startedAt}` : ''}`,
    `  image:  ${status.image ?? '?'}${status.stale ? ` (stale: the Containerfile now gives ${image})` : ''}`,
    `  data:   ${instance.dataDir} (mounted at the same path)`,
    `  engine: ${describeEngine(engine)}`,
  ];
  if (status.stale || !status.running) lines.push(`Bring it up to date with: agent-kernel container up ${instance.name}`);
  return lines.join('\n');
}

export const containerCommand: Command = {
  name: 'container',
  summary: "An instance's container: up (build the image if needed, start it), status, down (remove it; the data stays), rebuild, prune (stale images), rm (everything the engine holds for the instance: container, egress proxy and link, images; the data stays).",
  usage: USAGE,
  options: [
    ["--json", "status as JSON"],
    ["--quiet, -q", "no progress lines"],
  ],
  examples: [
    "agent-kernel container status demo",
    "agent-kernel container rebuild demo",
  ],
  async run(args) {
    const usage = `agent-kernel ${USAGE}`;
    const { values, positionals } = parseCommandArgs(args, {
      usage,
      options: { json: { type: 'boolean', default: false }, quiet: { type: 'boolean', short: 'q', default: false } },
      positionals: { min: 2, max: 2 },
      missing: 'Name an action and an instance.',
    });
    const [action, target] = positionals as [string, string];
    if (!ACTIONS.includes(action as Action)) throw usageError(usage, `Unknown action ${JSON.stringify(action)}.`);
    const instance = await resolveInstance(target);
    const engine = await connectEngine({ socket: engineSetting(instance.config.container) });
    const logger = createLogger({ process: 'agent-kernel', level: process.env.AGENT_KERNEL_LOG_LEVEL ?? 'warn' });
    const progress = values.quiet || values.json ? undefined : (line: string) => out(`  ${finalText(line)}
`);
    const options = { logger, onProgress: progress, recreateForConfig: true };

    const print = (result: unknown, text: string): void => {
      out(values.json ? JSON.stringify(result, null, 2) + '\n' : text + '\n');
    };
    switch (action as Action) {
      case 'up':
      case 'rebuild': {
        const status = await (action === 'up' ? containerUp(engine, instance, options) : containerRebuild(engine, instance, options));
        print(status, formatStatus(instance, status, engine));
        return EXIT.OK;
      }
      case 'status': {
        const status = await containerStatus(engine, instance);
        print(status, formatStatus(instance, status, engine));
        return EXIT.OK;
      }
      case 'down': {
        const status = await containerDown(engine, instance, options);
        print(status, `${status.name}: removed (the data in ${instance.dataDir} stays)`);
        return EXIT.OK;
      }
      case 'prune': {
        const result = await prune(engine, instance, options);
        const lines = [
          `removed ${result.removedContainers.length} container(s), ${result.removedImages.length} image(s)`,
          ...result.kept.map((k) => `  kept ${k}`),
        ];
        print(result, lines.join('\n'));
        return EXIT.OK;
      }
      case 'rm': {
        const removed = await removeInstanceResources(engine, instance.name, progress);
        const lines = [
          `removed ${removed.containers.length} container(s), ${removed.volumes.length} volume(s), ${removed.images.length} image(s) of ${instance.name}; the data in ${instance.dataDir} stays`,
          ...removed.kept.map((k) => `  kept ${k}`),
        ];
        print(removed, lines.join('\n'));
        return EXIT.OK;
      }
    }
  },
};
