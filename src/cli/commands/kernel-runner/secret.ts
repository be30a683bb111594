import { resolveInstance } from '../../../config/instance.js';
import { listSecrets, removeSecret, writeSecret } from '../../../runner/secrets/secret-files.js';
import { secretsDir } from '../../../runner/secrets/secrets.js';
import { parseCommandArgs, usageError } from '../args.js';
import { type Command, EXIT, out } from '../command.js';
import { readSecretInput } from './read-secret.js';

const USAGE = 'secret set|ls|rm <name> [VARIABLE]';

export const secretCommand: Command = {
  name: 'secret',
  summary: "Set (from stdin, never the command line), list or remove a variable of an instance's secrets directory, which every tick's harness gets (such as CLAUDE_CODE_OAUTH_TOKEN).",
  usage: USAGE,
  examples: [
    "kernel-runner secret set scout CLAUDE_CODE_OAUTH_TOKEN   # paste it: not shown",
    "kernel-runner secret ls scout",
    "kernel-runner secret rm scout ANTHROPIC_API_KEY",
  ],
  async run(args) {
    const usage = `kernel-runner ${USAGE}`;
    const { positionals } = parseCommandArgs(args, { usage, options: {}, positionals: { min: 2, max: 3 }, missing: 'Name an action and an instance.' });
    const [action, name, variable] = positionals as [string, string, string | undefined];
    if (!['set', 'ls', 'rm'].includes(action)) throw usageError(usage, `Unknown action ${JSON.stringify(action)}.`);
    if (action !== 'ls' && variable === undefined) throw usageError(usage, `Name the variable to ${action}, such as CLAUDE_CODE_OAUTH_TOKEN.`);
    const instance = await resolveInstance(name);
    const dir = secretsDir(instance.name, instance.dataDir, instance.config.runner.secrets_dir);
    if (action === 'ls') {
      const secrets = await listSecrets(dir);
      if (secrets.length === 0) out(`No secrets for ${instance.name} (${dir}). Add one with: kernel-runner secret set ${instance.name} VARIABLE\n`);
      else out(`${dir}:\n${secrets.map((s) => `  ${s.variable}   set ${s.modified.toISOString()}`).join('\n')}\n`);
      return EXIT.OK;
    }
    const which = variable as string;
    if (action === 'rm') {
      const removed = await removeSecret(dir, which);
      out(removed ? `Removed ${which} from ${dir}.\n` : `${which} is not in ${dir}: nothing to remove.\n`);
      return EXIT.OK;
    }
    const value = await readSecretInput(`Paste the value of ${which} for ${instance.name} (it is not shown), then press Enter: `);
    const file = await writeSecret(dir, which, value);
    out(`Saved ${which} in ${file} (mode 0600). Every tick of ${instance.name} gets it from the next one on; agent-kernel doctor ${instance.name} checks Claude Code's login.\n`);
    return EXIT.OK;
  },
};
