import { describe } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { defineTerminalTests } from './terminals.suite.js';

/**
 * The same terminals with their output read through pane pipes (issue 36: pane-reader.ts), not
 * control mode's %output. Opt-in (AK_TEST_PANE_FRAMES=1) while the path is off by default: with it
 * on, the input-wait judgement of the vi/less and python REPL tests still says `settled` where
 * control mode says `input` (2026-12-06, load 20-30); the rest of the shared suite's
 * output tests passed with it (exit codes, a million lines, shell marks, C-c on a runaway loop).
 */
process.env.AGENT_KERNEL_PANE_FRAMES = '1';
const optedIn: typeof describe = ((...args: Parameters<typeof describe>) => describe.skipIf(process.env.AK_TEST_PANE_FRAMES !== '1')(...args)) as typeof describe;
defineTerminalTests('docker', process.env.AK_TEST_PANE_FRAMES === '1' ? describeWithEngine : optedIn);
