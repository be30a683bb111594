import { resolveInstance } from '../../../config/instance.js';
import { conversations, formatConversations } from '../../../mail/conversations.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

export const mailCommand: Command = {
  name: 'mail',
  summary: "An instance's messages, received and sent, oldest first: who, when, what each answers, and whether the model has had it.",
  usage: 'mail <name> [--json]',
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, {
      usage: 'kernel-runner mail <name> [--json]',
      options: { json: { type: 'boolean', default: false } },
      positionals: { min: 1, max: 1 },
      missing: 'Name an instance.',
    });
    const instance = await resolveInstance(positionals[0] as string);
    const lines = await conversations(instance);
    out(values.json ? JSON.stringify(lines, null, 2) + '\n' : formatConversations(lines) + '\n');
    return EXIT.OK;
  },
};
