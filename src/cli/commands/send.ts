import { resolveInstance } from '../../config/instance.js';
import { sendMessage } from '../../runner/watch/inbox.js';
import { parseCommandArgs, usageError } from '../args.js';
import { type Command, EXIT, out } from '../command.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const USAGE = 'send <name> [--from <sender>] [--reply-to <id>] [--] [message...]   (no message: read it from stdin)';

export const sendCommand: Command = {
  name: 'send',
  summary: "Drop a message in an instance's inbox (from the arguments or stdin); a running watch delivers it.",
  usage: USAGE,
  async run(args) {
    const usage = `kernel-runner ${USAGE}`;
    const { values, positionals } = parseCommandArgs(args, {
      usage,
      options: { from: { type: 'string' }, 'reply-to': { type: 'string' } },
      positionals: { min: 1, max: Infinity },
      missing: 'Name an instance.',
    });
    const from = values.from;
    const replyTo = values['reply-to'];
    const [name, ...message] = positionals as [string, ...string[]];
    const instance = await resolveInstance(name);
    let text = message.join(' ');
    if (message.length === 0) {
      if (process.stdin.isTTY) throw usageError(usage, 'No message: give it after the name, or pipe it in.');
      text = await readStdin();
    }
    const { id } = await sendMessage(instance.paths, { text, ...(from ? { from } : {}), ...(replyTo ? { replyTo } : {}) });
    out(`${id}\n`);
    return EXIT.OK;
  },
};
