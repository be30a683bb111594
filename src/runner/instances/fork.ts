import { copyFile, link, lstat, mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Instance, loadInstance } from '../../config/instance.js';
import { instanceStateRoot } from '../../config/homes.js';
import { instancePaths } from '../../config/paths.js';
import { ensurePrivateDir } from '../../config/private-dir.js';
import { configHome, loadRegistry, registerInstance, validateInstanceName } from '../../config/registry.js';
import { CodedError, describeError, isCodedError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { sendOperatorMessage } from '../../mail/operator-send.js';
import { findSnapshot } from '../../snapshot/actions.js';
import { holdInstance } from '../../snapshot/hold.js';
import { type Manifest, digestsOf } from '../../snapshot/manifest.js';
import { type RestoreReport, restoreSnapshot } from '../../snapshot/restore.js';
import { storeOf } from '../../snapshot/take.js';
import { isWithin } from '../../util/within.js';
import { statusSocketPath } from '../watch/service/status-api.js';
import { findRemovalTarget, removeInstance } from './instance-removal.js';

/**
 * `kernel-runner fork NAME NEW`: a new instance made from one of NAME's snapshots. NEW gets its
 * own data directory (beside NAME's, named NEW, unless the operator says where), its own
 * operator's file (NAME's, without its secrets folder), its own state, container, egress proxy
 * and post-office name. The snapshot's manifest and contents are linked into NEW's own store
 * (host-private, same file system: no copy) and restored there exactly as a rollback is, every
 * file checked against its digest. NAME is only read: its store, its operator's file.
 */

export interface ForkOptions {
  /** A snapshot id of the parent (default its newest). */
  from?: string;
  /** The fork's data directory (default: beside the parent's, named after the fork). */
  dataDir?: string;
  logger: Logger;
  onProgress?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

export interface ForkReport extends RestoreReport {
  fork: Instance;
  /** The parent's snapshot it was made from. */
  from: Manifest;
}

const exists = (file: string) => lstat(file).then(() => true, () => false);

/** Everything that would make NEW not new, each refused with the fix. */
async function assertNew(parent: Instance, name: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<void> {
  validateInstanceName(name);
  if (name === parent.name) throw new CodedError('USAGE', `A fork needs a name of its own: ${name} is the instance it is made from.`);
  const registered = (await loadRegistry(env)).instances[name];
  if (registered) throw new CodedError('USAGE', `An instance named ${name} exists already (at ${registered.dir}): pick another name, or remove it first (kernel-runner rm ${name}).`);
  if (await exists(dataDir)) throw new CodedError('USAGE', `${dataDir} exists already, and a fork gets a new data directory: pick another place with --data DIR, or move that one away.`);
  const paths = instancePaths(name, dataDir, env);
  for (const [what, file] of [['state', instanceStateRoot(name, env)], ["operator's file", paths.operatorConfig]] as const) {
    if (await exists(file)) throw new CodedError('USAGE', `The name ${name} has ${what} left from an earlier instance (${file}): pick another name, or delete it if it is no longer needed.`);
  }
  // A fork's data directory inside its parent's would be written by the parent's container.
  const folder = await realpath(path.dirname(dataDir)).catch(() => path.dirname(dataDir));
  const parentData = await realpath(parent.dataDir).catch(() => parent.dataDir);
  if (isWithin(dataDir, parent.dataDir) || isWithin(path.join(folder, path.basename(dataDir)), parentData)) {
    throw new CodedError('USAGE', `${dataDir} is inside ${parent.name}'s data directory, which its container can write: pick a place outside it with --data DIR.`);
  }
}

/** The parent's operator's file (host-private, the operator's own) for the fork; secrets stay the parent's. */
async function writeForkOperatorFile(parent: Instance, file: string, env: NodeJS.ProcessEnv): Promise<void> {
  const text = await readFile(parent.paths.operatorConfig, 'utf8').catch(() => undefined);
  const config = (text === undefined ? { container: {}, runner: { harness: 'claude-code' } } : JSON.parse(text)) as { runner?: { secrets_dir?: unknown } };
  if (config.runner && typeof config.runner === 'object') delete config.runner.secrets_dir;
  await ensurePrivateDir(path.dirname(file), configHome(env));
  await writeFile(file, JSON.stringify(config, null, 2) + '\n', { flag: 'wx', mode: 0o600 });
}

/** The snapshot's contents, linked from the parent's store into the fork's (a copy across file systems). */
async function shareSnapshot(parent: Instance, fork: Instance, manifest: Manifest): Promise<Manifest> {
  const from = storeOf(parent);
  const to = storeOf(fork);
  await to.store.ensure();
  for (const digest of new Set(digestsOf(manifest))) {
    const source = from.store.path(digest);
    const target = to.store.path(digest);
    // A missing object is left to the restore's check, which names it.
    if (!(await lstat(source).then((s) => s.isFile(), () => false))) continue;
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    await link(source, target).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST') return;
      if (error.code !== 'EXDEV') throw error;
      await copyFile(source, target);
    });
  }
  const { id: _id, version: _version, ...draft } = manifest;
  return to.shelf.add({ ...draft, instance: fork.name, trigger: 'fork', note: `fork of ${parent.name}'s snapshot ${manifest.id}${manifest.note ? ` (${manifest.note})` : ''}` });
}

export async function forkInstance(parent: Instance, name: string, options: ForkOptions): Promise<ForkReport> {
  const env = options.env ?? process.env;
  const dataDir = path.resolve(options.dataDir ?? path.join(path.dirname(parent.dataDir), name));
  await assertNew(parent, name, dataDir, env);
  const from = await findSnapshot(parent, options.from === undefined ? {} : { id: options.from });
  await mkdir(path.dirname(dataDir), { recursive: true });
  // Not recursive: a folder made there meanwhile is not taken over.
  await mkdir(dataDir, { mode: 0o755 });
  try {
    return await makeFork(parent, name, dataDir, from, options, env);
  } catch (error) {
    // Half a fork is no fork: what was made for it goes, and the error says so.
    const removal = await removeInstance(await findRemovalTarget(name, env), { data: true, watchSocket: statusSocketPath(name, env), env }).catch(() => undefined);
    const left = removal === undefined ? ` Remove what was made with kernel-runner rm ${name} --data.` : removal.kept.length ? ` Left: ${removal.kept.join('; ')}.` : ` Nothing of ${name} was kept.`;
    throw new CodedError(isCodedError(error) ? error.code : 'INTERNAL', `Forking ${parent.name} into ${name} failed: ${describeError(error)}${left}`, { cause: error });
  }
}

async function makeFork(parent: Instance, name: string, dataDir: string, from: Manifest, options: ForkOptions, env: NodeJS.ProcessEnv): Promise<ForkReport> {
  await writeForkOperatorFile(parent, instancePaths(name, dataDir, env).operatorConfig, env);
  await registerInstance(name, dataDir, env);
  const fork = await loadInstance(name, dataDir, env, true);
  options.onProgress?.(`linking snapshot ${from.id} of ${parent.name} into ${name}'s store`);
  const own = await shareSnapshot(parent, fork, from);
  const hold = await holdInstance(fork, { restore: true, logger: options.logger });
  let report: RestoreReport;
  try {
    report = await restoreSnapshot(fork, own.id, { logger: options.logger, ...(options.onProgress ? { onProgress: options.onProgress } : {}) });
  } finally {
    await hold.release();
  }
  const when = from.tick === undefined ? from.createdAt : `${from.createdAt}, ${from.trigger === 'before-tick' ? 'before' : 'after'} tick ${from.tick}`;
  await sendOperatorMessage(fork, {
    label: 'kernel-runner',
    text: `You are ${name}, a fork of ${parent.name}: your computer (data directory, container, terminals' record) is ${parent.name}'s as it was at its snapshot ${from.id} (${when}). From now on the two of you change apart; ${parent.name} goes on beside you and does not see your changes, nor you its. Running programs were not kept: the terminals open then are reported lost to the restart.`,
  });
  return { ...report, fork: await loadInstance(name, dataDir, env, true), from };
}
