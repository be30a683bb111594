import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const imageCommand: Command = {
  name: 'image',
  summary: "Build base images offline (bootstrap) from Debian packages.",
  usage: 'image bootstrap [<tag>]',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'image is not built yet'));
  },
};
