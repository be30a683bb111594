import { describeWithEngine } from '../../helpers/engine.js';
import { defineTerminalTests } from './terminals.suite.js';

// The real thing: terminals in tmux inside a hardened container.
defineTerminalTests('docker', describeWithEngine);
