import { resolveInstance } from '../../../config/instance.js';
import { adoptIgnored, describeIgnored, readConfigFiles } from '../../../config/operator-config.js';
import { parseAgentConfig } from '../../../config/agent-config.js';
import { writeFileAtomic } from '../../../util/atomic-write.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

const USAGE = 'config <name-or-dir> [--adopt] [--json]';

/**
 * What configuration applies to an instance and where each part comes from: the operator's
 * file (host effect) and the agent's system/agent_config.json (what the agent may tune).
 */
export const configCommand: Command = {
  name: 'config',
  summary: "Show an instance's configuration and its sources; --adopt takes over fields the agent set that were ignored.",
  usage: USAGE,
  options: [
    ["--adopt", "take over fields the agent set that were ignored"],
    ["--json", "as JSON"],
  ],
  examples: [
    "agent-kernel config demo",
  ],
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, {
      usage: `agent-kernel ${USAGE}`,
      options: { adopt: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
      positionals: { min: 1, max: 1 },
      missing: 'Name an instance.',
    });
    const instance = await resolveInstance(positionals[0] as string);
    const ignored = instance.ignoredConfig ?? [];
    const print = (text: string): void => void out(`${text}\n`);

    if (values.adopt) {
      if (ignored.length === 0) {
        print(`Nothing to adopt: system/agent_config.json sets no field that the operator's file ${instance.paths.operatorConfig} does not.`);
        return EXIT.OK;
      }
      const { operator, agent } = await readConfigFiles(instance.name, instance.dataDir);
      const adopted = adoptIgnored(operator.raw, agent.raw, ignored);
      parseAgentConfig(adopted, operator.file);
      await writeFileAtomic(operator.file, `${JSON.stringify(adopted, null, 2)}\n`, 0o600);
      print(`Adopted into ${operator.file}: ${ignored.join(', ')}.`);
      return EXIT.OK;
    }
    if (values.json) {
      print(JSON.stringify({ operatorFile: instance.paths.operatorConfig, agentFile: instance.paths.agentConfig, ignored, config: instance.config }, null, 2));
      return EXIT.OK;
    }
    print(`${instance.name} (${instance.dataDir})`);
    print(`  operator's file (host effect, out of the agent's reach): ${instance.paths.operatorConfig}`);
    print(`  agent's file (tty.*, hook_env_prefix, runner.prompt/prompt_file/append_system_prompt/wrap_up_ratio/context_window): ${instance.paths.agentConfig}`);
    if (ignored.length > 0) print(`\n${describeIgnored(ignored, instance)}`);
    print(`\nIn effect:\n${JSON.stringify(instance.config, null, 2)}`);
    return EXIT.OK;
  },
};
