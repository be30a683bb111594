import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const instancesCommand: Command = {
  name: 'ls',
  summary: "List registered instances.",
  usage: 'ls',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'ls is not built yet'));
  },
};
