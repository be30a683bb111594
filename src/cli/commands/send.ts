import { resolveInstance } from '../../config/instance.js';
import { KernelError } from '../../errors.js';
import { sendMessage } from '../../runner/watch/inbox.js';
import { type Command, EXIT } from '../command.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const USAGE = 'send <name> [--from <sender>] [--reply-to <id>] [message...]   (no message: read it from stdin)';

export const sendCommand: Command = {
  name: 'send',
  summary: "Drop a message in an instance's inbox (from the arguments or stdin); a running watch delivers it.",
  usage: USAGE,
  async run(args) {
    let from: string | undefined;
    let replyTo: string | undefined;
    const words: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]!;
      if (arg === '--from' || arg === '--reply-to') {
        const value = args[++i];
        if (value === undefined) throw new KernelError('USAGE', `${arg} needs a value. usage: kernel-runner ${USAGE}`);
        if (arg === '--from') from = value;
        else replyTo = value;
      } else if (arg === '--') {
        words.push(...args.slice(i + 1));
        break;
      } else {
        words.push(arg);
      }
    }
    const [name, ...message] = words;
    if (!name) throw new KernelError('USAGE', `usage: kernel-runner ${USAGE}`);
    const instance = await resolveInstance(name);
    let text = message.join(' ');
    if (message.length === 0) {
      if (process.stdin.isTTY) throw new KernelError('USAGE', `No message: give it after the name, or pipe it in. usage: kernel-runner ${USAGE}`);
      text = await readStdin();
    }
    const { id } = await sendMessage(instance.paths, { text, ...(from ? { from } : {}), ...(replyTo ? { replyTo } : {}) });
    process.stdout.write(`${id}\n`);
    return EXIT.OK;
  },
};
