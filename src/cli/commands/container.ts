import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const containerCommand: Command = {
  name: 'container',
  summary: "Manage an instance's container: up, status, down, rebuild.",
  usage: 'container up|status|down|rebuild <name-or-dir>',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'container is not built yet'));
  },
};
