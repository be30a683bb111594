import { defineTerminalTests } from './terminals.suite.js';

// The host backend on a machine without tmux: the same terminals as node-pty PTYs of the
// server (forced here with AGENT_KERNEL_HOST_TMUX=0, since this machine has tmux).
defineTerminalTests('pty');
