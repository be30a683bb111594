import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const watchCommand: Command = {
  name: 'watch',
  summary: "Tick an instance when messages arrive, on schedule, and after crashes.",
  usage: 'watch <name>',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'watch is not built yet'));
  },
};
