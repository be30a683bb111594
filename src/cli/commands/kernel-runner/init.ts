import { loadInstance } from '../../../config/instance.js';
import { describeIgnored } from '../../../config/operator-config.js';
import { initInstance } from '../../../runner/instances/init.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

export const initCommand: Command = {
  name: 'init',
  summary: 'Create a data repo for a new instance and register its name.',
  usage: 'init <name> <dir>',
  examples: [
    "kernel-runner init scout ~/scout",
  ],
  async run(args) {
    const { positionals } = parseCommandArgs(args, {
      usage: 'kernel-runner init <name> <dir> (for example: kernel-runner init scout ~/agents/scout)',
      options: {},
      positionals: { min: 2, max: 2 },
      missing: 'Name the instance and its directory.',
    });
    const [name, dir] = positionals as [string, string];
    const result = await initInstance(name, dir);
    const what = result.created.length > 0 ? `created ${result.created.length} files` : 'nothing to create (already a data repo)';
    const instance = await loadInstance(result.name, result.dataDir);
    out(
      `Instance "${result.name}" → ${result.dataDir}: ${what}${result.gitInitialized ? ', git repo initialized' : ''}.\n` +
        result.refused.map((line) => `Not written: ${line}\n`).join('') +
        `What the host runs (runner, container) is yours: ${instance.paths.operatorConfig}\n` +
        `To push the agent's commits after each tick, set runner.push.remote there (a URL, e.g. git@github.com:you/${result.name}.git).\n` +
        `What the agent may tune (tty, its prompt): ${instance.paths.agentConfig}\n` +
        (instance.ignoredConfig?.length ? `${describeIgnored(instance.ignoredConfig, instance)}\n` : '') +
        `Next: give Claude Code credentials for its ticks (agent-kernel doctor ${result.name} says whether it has them):\n` +
        `  claude setup-token, then kernel-runner secret set ${result.name} CLAUDE_CODE_OAUTH_TOKEN (or ANTHROPIC_API_KEY with an API key)\n` +
        `then: kernel-runner tick ${result.name}\n`,
    );
    return EXIT.OK;
  },
};
