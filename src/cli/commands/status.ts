import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const statusCommand: Command = {
  name: 'status',
  summary: "Show the watch status of instances.",
  usage: 'status [name]',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'status is not built yet'));
  },
};
