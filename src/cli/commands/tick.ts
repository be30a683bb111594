import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const tickCommand: Command = {
  name: 'tick',
  summary: "Run one tick of an instance: Claude Code against the kernel.",
  usage: 'tick <name>',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'tick is not built yet'));
  },
};
