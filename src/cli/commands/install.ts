import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const installCommand: Command = {
  name: 'install',
  summary: "Write a systemd user unit that runs watch for an instance.",
  usage: 'install <name>',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'install is not built yet'));
  },
};

export const uninstallCommand: Command = {
  name: 'uninstall',
  summary: "Remove the systemd user unit of an instance.",
  usage: 'uninstall <name>',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'uninstall is not built yet'));
  },
};
