import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// Host-private instance state (paths.ts) goes to a temp folder per run, never the user's ~/.local/state.
const stateDir = process.env.AGENT_KERNEL_STATE_DIR ?? path.join(os.tmpdir(), `ak-state-${process.pid}`);
process.env.AGENT_KERNEL_STATE_DIR = stateDir;
// The operator's configuration and the instance registry likewise, never the user's ~/.config.
const configDir = process.env.AGENT_KERNEL_CONFIG_DIR ?? path.join(os.tmpdir(), `ak-config-${process.pid}`);
process.env.AGENT_KERNEL_CONFIG_DIR = configDir;
// A home of the run's own: the host backend's shells read ~/.bashrc, and the machine's may be
// slow or hang (pyenv's rehash waits 60 s on a lock a killed shell left behind). Tests that
// commit on the host get a fixed identity from it, not from the machine's ~/.gitconfig.
const homeDir = path.join(os.tmpdir(), `ak-home-${process.pid}`);
mkdirSync(homeDir, { recursive: true, mode: 0o700 });
writeFileSync(path.join(homeDir, '.gitconfig'), '[user]\n\tname = agent-kernel tests\n\temail = tests@agent-kernel.invalid\n');
process.env.HOME = homeDir;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 300_000,
    // Container tests share one engine on a 2-core machine: keep the parallelism modest.
    maxWorkers: 2,
    globalSetup: ['test/helpers/global-setup.ts'],
    env: { AGENT_KERNEL_STATE_DIR: stateDir, AGENT_KERNEL_CONFIG_DIR: configDir, HOME: homeDir },
  },
});
