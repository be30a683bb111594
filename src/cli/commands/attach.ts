import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const attachCommand: Command = {
  name: 'attach',
  summary: "Attach your terminal to one of an instance's TTYs to watch it (read-only unless --write).",
  usage: 'attach <name-or-dir> <tty> [--write]',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'attach is not built yet'));
  },
};
