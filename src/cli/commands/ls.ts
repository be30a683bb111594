import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const lsCommand: Command = {
  name: 'ls',
  summary: "List an instance's TTYs with program, state and unseen lines.",
  usage: 'ls <name-or-dir>',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'ls is not built yet'));
  },
};
