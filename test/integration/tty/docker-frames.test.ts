import { describe } from 'vitest';
import { describeWithEngine } from '../../helpers/engine.js';
import { defineTerminalTests } from './terminals.suite.js';

/**
 * The same terminals with their output read through pane pipes (issue 36: pane-reader.ts), not
 * control mode's %output. Opt-in (AK_TEST_PANE_FRAMES=1) while the path is off by default. The
 * whole run no longer hangs (the brake's `no-output` toggle hung tmux 3.3a's control client; see
 * pane-frames-flood.test.ts): 2026-12-06, load 30-35, 30 of 32 passed in 6 min. Still failing:
 * "stops reading while the emulators are behind" (1.7 MB arrive after the program is held, bound
 * 1 MB: tmux never waits on a pipe and keeps what the pipe has not taken in its memory, without
 * limit; a `yes` flood grew tmux from 15 to 107 MB in 37 s) and, under that load, one input-wait
 * judgement after a restart ('timeout' for 'input').
 */
process.env.AGENT_KERNEL_PANE_FRAMES = '1';
const optedIn: typeof describe = ((...args: Parameters<typeof describe>) => describe.skipIf(process.env.AK_TEST_PANE_FRAMES !== '1')(...args)) as typeof describe;
defineTerminalTests('docker', process.env.AK_TEST_PANE_FRAMES === '1' ? describeWithEngine : optedIn);
