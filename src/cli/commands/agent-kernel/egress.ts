import { resolveInstance } from '../../../config/instance.js';
import { containerStatus, isContainerStale } from '../../../sandbox/container/container.js';
import { formatRecords, readEgressLog, topRefused } from '../../../sandbox/egress/log.js';
import { applyAllowlist, egressStatus } from '../../../sandbox/egress/proxy.js';
import { connectEngine, engineSetting } from '../../../sandbox/engine/engine.js';
import { parseCommandArgs, usageError } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

const USAGE = 'egress log|top|apply <name-or-dir> [--lines N] [--json]';
const ACTIONS = ['log', 'top', 'apply'] as const;

export const egressCommand: Command = {
  name: 'egress',
  summary: "An instance's network: log (recent connections), top (most refused destinations), apply (a changed allowlist, without a restart).",
  usage: USAGE,
  options: [
    ["--lines N, -n N", "how many log lines (default 50)"],
    ["--json", "as JSON"],
  ],
  examples: [
    "agent-kernel egress log demo --lines 20",
    "agent-kernel egress top demo",
    "agent-kernel egress apply demo   # after editing the allowlist",
  ],
  async run(args) {
    const usage = `agent-kernel ${USAGE}`;
    const { values, positionals } = parseCommandArgs(args, {
      usage,
      options: { lines: { type: 'string', short: 'n', default: '50' }, json: { type: 'boolean', default: false } },
      positionals: { min: 2, max: 2 },
      missing: 'Name an action and an instance.',
    });
    const [action, target] = positionals as [string, string];
    if (!ACTIONS.includes(action as (typeof ACTIONS)[number])) throw usageError(usage, `Unknown action ${JSON.stringify(action)}.`);
    const lines = Number(values.lines);
    if (!Number.isInteger(lines) || lines < 1) throw usageError(usage, `--lines wants a whole number of lines, such as 50; got ${JSON.stringify(values.lines)}.`);
    const instance = await resolveInstance(target);
    const engine = await connectEngine({ socket: engineSetting(instance.config.container) });
    const print = (text: string): void => void out(`${text}\n`);

    if (action === 'log') {
      const records = await readEgressLog(engine, instance, lines);
      print(values.json ? JSON.stringify(records, null, 2) : formatRecords(records));
      return EXIT.OK;
    }
    if (action === 'top') {
      const top = topRefused(await readEgressLog(engine, instance));
      if (values.json) print(JSON.stringify(top, null, 2));
      else if (top.length === 0) print('Nothing was refused.');
      else {
        print(top.map((t) => `${String(t.count).padStart(6)}  ${t.destination.padEnd(44)} last ${new Date(t.last).toISOString()}`).join('\n'));
        print(`\nTo allow one, add it to container.allow in ${instance.paths.operatorConfig} (for example "${top[0]?.destination}"), then: agent-kernel egress apply ${instance.name}`);
      }
      return EXIT.OK;
    }
    // apply
    const status = await containerStatus(engine, instance);
    const egress = await egressStatus(engine, instance);
    if (!status.running) {
      print(`${status.name} is not running; the allowlist applies when it starts (agent-kernel container up ${instance.name}).`);
      return EXIT.OK;
    }
    if (egress.policy !== 'allowlist' || !egress.proxyRunning || (await isContainerStale(engine, instance))) {
      print(
        `The network policy of ${instance.name} (${egress.policy}) is not what the running container was made with: changing the policy recreates the container, which ends its terminals. Do it with: agent-kernel container up ${instance.name}`,
      );
      return EXIT.NOT_READY;
    }
    const { changed } = await applyAllowlist(engine, instance);
    print(`${changed ? 'Applied' : 'Already applied'}: ${egress.allowed.length} destination${egress.allowed.length === 1 ? '' : 's'} allowed (${egress.allowed.join(', ')}). No restart needed; terminals keep running.`);
    return EXIT.OK;
  },
};

