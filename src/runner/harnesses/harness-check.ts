import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Instance } from '../../config/instance.js';
import { CodedError } from '../../errors.js';
import { getHarness } from './index.js';
import { isWithin } from '../../util/within.js';

/** Pure-ish: the first executable called `command` on PATH (or the path itself when it has a slash). */
export function findExecutable(command: string, pathVariable: string | undefined, cwd: string): string | undefined {
  const candidates = command.includes('/')
    ? [path.resolve(cwd, command)]
    : (pathVariable ?? '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, command));
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not there, or not executable: try the next one
    }
  }
  return undefined;
}

/**
 * The harness's binary, checked at watch start (not at the first tick): the command the
 * harness would run for this config, found on PATH. Throws HARNESS_MISSING naming it, or
 * CONFIG_INVALID for a harness that cannot be set up (custom without a template).
 */
export function checkHarnessAvailable(instance: Instance, env: NodeJS.ProcessEnv = process.env): string {
  const runner = instance.config.runner;
  const harness = getHarness(runner.harness);
  // A placeholder setup: the command does not depend on the tick's files or server.
  const invocation = harness.invocation({
    instanceName: instance.name,
    dataDir: instance.dataDir,
    cwd: instance.paths.harnessCwd,
    home: instance.paths.harnessHome,
    workDir: instance.paths.harnessCwd,
    tick: 0,
    sessionId: '00000000-0000-0000-0000-000000000000',
    prompt: '',
    mcpServer: { command: process.execPath, args: [], env: {} },
    settingsFile: '',
    config: runner,
    model: runner.model ?? instance.config.model,
    env,
  });
  const found = findExecutable(invocation.command, env.PATH, invocation.cwd);
  if (!found) {
    const how =
      runner.harness === 'custom'
        ? 'Fix the command template in runner.command'
        : `Install it, or set runner.command to its path in ${instance.paths.operatorConfig}`;
    throw new CodedError(
      'HARNESS_MISSING',
      `The ${runner.harness} harness needs "${invocation.command}", which is not ${invocation.command.includes('/') ? 'an executable file' : 'on PATH'}. ${how}.`,
      { details: { harness: runner.harness, command: invocation.command } },
    );
  }
  refuseDataDirCommand(instance, invocation.command, path.resolve(invocation.cwd, found), env.PATH);
  return found;
}

/**
 * The host never runs a file the agent can write: not a harness inside the data directory,
 * nor one a relative PATH entry could find there (whatever folder the harness, or what it starts, is in).
 */
function refuseDataDirCommand(instance: Instance, command: string, found: string, pathVariable: string | undefined): void {
  let target = path.resolve(found);
  try {
    target = realpathSync(found);
  } catch {
    // not there: its name is what counts
  }
  const relativeEntry = !command.includes('/') && (pathVariable ?? '').split(path.delimiter).some((dir) => dir === '' || !path.isAbsolute(dir));
  if (isWithin(target, instance.dataDir) || relativeEntry) {
    throw new CodedError(
      'CONFIG_REFUSED',
      relativeEntry
        ? `PATH holds a relative folder, so "${command}" could be found in the data directory, which the agent can write. Use only absolute folders in the runner's PATH.`
        : `The harness command ${target} is inside the data directory, which the agent can write; the host never runs files from there. Install it elsewhere and set runner.command in ${instance.paths.operatorConfig}.`,
      { details: { command, found: target } },
    );
  }
}
