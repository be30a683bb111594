import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const doctorCommand: Command = {
  name: 'doctor',
  summary: "Check that everything an instance needs is ready; each failing row says how to fix it.",
  usage: 'doctor [<name-or-dir>]',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'doctor is not built yet'));
  },
};
