import type { Command } from '../command.js';
import { KernelError } from '../../errors.js';

// Placeholder: replaced by the issue that builds this command.
export const serveCommand: Command = {
  name: 'serve',
  summary: "Serve the MCP tools (login, open, type, wait, close) over stdio, or Streamable HTTP with --http.",
  usage: 'serve <name-or-dir> [--http [host:]port]',
  run() {
    return Promise.reject(new KernelError('INTERNAL', 'serve is not built yet'));
  },
};
