import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// Host-private instance state (paths.ts) goes to a temp folder per run, never the user's ~/.local/state.
const stateDir = process.env.AGENT_KERNEL_STATE_DIR ?? path.join(os.tmpdir(), `ak-state-${process.pid}`);
process.env.AGENT_KERNEL_STATE_DIR = stateDir;
// The operator's configuration and the instance registry likewise, never the user's ~/.config.
const configDir = process.env.AGENT_KERNEL_CONFIG_DIR ?? path.join(os.tmpdir(), `ak-config-${process.pid}`);
process.env.AGENT_KERNEL_CONFIG_DIR = configDir;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 300_000,
    // Container tests share one engine on a 2-core machine: keep the parallelism modest.
    maxWorkers: 2,
    globalSetup: ['test/helpers/global-setup.ts'],
    env: { AGENT_KERNEL_STATE_DIR: stateDir, AGENT_KERNEL_CONFIG_DIR: configDir },
  },
});
