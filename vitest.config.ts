import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// Folders of the run's own, made fresh (never named by PID: a CI machine's PIDs repeat from run
// to run, and a folder left by an earlier run would hand this one its claims) and removed at exit.
const madeHere: string[] = [];
function runDir(variable: string, prefix: string): string {
  const given = process.env[variable];
  if (given !== undefined && given !== '') return given;
  const made = mkdtempSync(path.join(os.tmpdir(), prefix));
  madeHere.push(made);
  process.env[variable] = made;
  return made;
}
process.on('exit', () => {
  for (const dir of madeHere) rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
});

// Host-private instance state (paths.ts) goes to a temp folder per run, never the user's ~/.local/state.
const stateDir = runDir('AGENT_KERNEL_STATE_DIR', 'ak-state-');
// The operator's configuration and the instance registry likewise, never the user's ~/.config.
const configDir = runDir('AGENT_KERNEL_CONFIG_DIR', 'ak-config-');
// A home of the run's own: the host backend's shells read ~/.bashrc, and the machine's may be
// slow or hang (pyenv's rehash waits 60 s on a lock a killed shell left behind). Tests that
// commit on the host get a fixed identity from it, not from the machine's ~/.gitconfig.
const homeDir = runDir('AK_TEST_HOME', 'ak-home-');
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
