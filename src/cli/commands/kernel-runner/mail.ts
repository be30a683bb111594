import { resolveInstance } from '../../../config/instance.js';
import { conversations, formatConversations } from '../../../mail/conversations.js';
import { withdrawMessage } from '../../../mail/withdraw.js';
import { queryAgentStatus } from '../../../runner/watch/service/status-api.js';
import { parseCommandArgs, usageError } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

const USAGE = 'mail <name> [--json] | mail withdraw <name> <id>';

export const mailCommand: Command = {
  name: 'mail',
  summary: "An instance's messages, received and sent, oldest first: who, when, what each answers, and whether the model has had it; withdraw takes back one still queued.",
  usage: USAGE,
  options: [['--json', 'as JSON']],
  examples: ['kernel-runner mail scout', 'kernel-runner mail withdraw scout m-20261206-040512-3f9a   # before its model has it'],
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, {
      usage: `kernel-runner ${USAGE}`,
      options: { json: { type: 'boolean', default: false } },
      positionals: { min: 1, max: 3 },
      missing: 'Name an instance.',
    });
    if (positionals[0] === 'withdraw' && positionals.length === 3) {
      const instance = await resolveInstance(positionals[1]!);
      const live = await queryAgentStatus(instance.name);
      const record = await withdrawMessage(instance, positionals[2]!);
      out(`${record.id}: withdrawn from ${instance.name}'s queue before its model had it (the event log keeps its text).\n`);
      if (live?.state === 'ticking') out(`A tick is running: if it already put the message in its prompt, the model may still read it there.\n`);
      return EXIT.OK;
    }
    if (positionals.length > 1) throw usageError(`kernel-runner ${USAGE}`, 'mail takes one instance, or withdraw, an instance and a message id.');
    const instance = await resolveInstance(positionals[0]!);
    const lines = await conversations(instance);
    out(values.json ? JSON.stringify(lines, null, 2) + '\n' : formatConversations(lines) + '\n');
    return EXIT.OK;
  },
};
