import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const initCommand: Command = {
  name: 'init',
  summary: "Create a data repo for a new instance and register its name.",
  usage: 'init <name> <dir>',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'init is not built yet'));
  },
};
