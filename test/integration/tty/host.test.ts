import { defineTerminalTests } from './terminals.suite.js';

// The host backend: the same terminals in a tmux server on this machine.
defineTerminalTests('host');
