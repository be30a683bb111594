import { chmod, lstat, mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CodedError } from '../errors.js';
import type { InstancePaths } from './paths.js';
import { isWithin } from '../util/within.js';
import { moveOldStateFolder } from './state-migration.js';

/**
 * Create the instance's host-private state directory (see paths.ts): the instance root and
 * `private/` 0700 (moved there from `kernel/`, its older name); the folders shown read-only to
 * the container 0755 (a remapped container root must be able to read them). Refuses a state
 * directory inside the data directory, or one that is a link: the container could then write
 * where the host keeps its state.
 */
export async function ensureStateDirs(paths: InstancePaths): Promise<void> {
  if (isWithin(paths.stateRoot, paths.root)) {
    throw new CodedError(
      'CONFIG_REFUSED',
      `The state directory ${paths.stateRoot} is inside the data directory ${paths.root}, which the container can write. Set AGENT_KERNEL_STATE_DIR (or XDG_STATE_HOME) to a folder outside it.`,
    );
  }
  await mkdir(path.dirname(paths.stateRoot), { recursive: true, mode: 0o700 });
  await mkdir(paths.stateRoot, { recursive: true, mode: 0o700 });
  const root = await lstat(paths.stateRoot);
  if (!root.isDirectory() || (process.getuid && root.uid !== process.getuid())) {
    throw new CodedError('CONFIG_REFUSED', `${paths.stateRoot} is not a directory owned by this user; move it away and start again.`);
  }
  await chmod(paths.stateRoot, 0o700);
  await moveOldStateFolder(paths);
  await mkdir(paths.privateState, { recursive: true, mode: 0o700 });
  await mkdir(paths.harnessCwd, { recursive: true, mode: 0o700 });
  await mkdir(paths.harnessHome, { recursive: true, mode: 0o700 });
  for (const { source } of paths.showToContainer) await mkdir(source, { recursive: true, mode: 0o755 });
}

/**
 * One state directory belongs to one data directory. Two data directories of the same name
 * (an unregistered `~/a/scout` and `~/b/scout`) would otherwise share locks, seen marks, logs and
 * the operator's configuration: the first one to use the name keeps it, the other is refused.
 * A registered name follows the registry (`registered`: the operator said where it lives).
 */
export async function claimStateDir(paths: InstancePaths, name: string, registered = false): Promise<void> {
  const file = path.join(paths.privateState, 'data-dir');
  const mine = await realpath(paths.root).catch(() => paths.root);
  const owner = (await readFile(file, 'utf8').catch(() => undefined))?.trim();
  if (owner === undefined || (registered && owner !== mine)) {
    await writeFile(file, `${mine}\n`, { mode: 0o600 });
    return;
  }
  if (owner !== mine) {
    throw new CodedError(
      'CONFIG_REFUSED',
      `The instance name "${name}" belongs to ${owner}, and ${mine} is another directory with the same name. Give it a name of its own (kernel-runner init <other-name> ${mine}), or, if the instance moved there, delete ${file}.`,
      { details: { name, owner, dataDir: mine } },
    );
  }
}
