import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const sendCommand: Command = {
  name: 'send',
  summary: "Drop a message in an instance's inbox (from the argument or stdin).",
  usage: 'send <name> [message]',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'send is not built yet'));
  },
};
