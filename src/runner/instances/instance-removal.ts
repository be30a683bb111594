import { lstat, readFile, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { nameFromDirectory } from '../../config/instance.js';
import { parseAgentConfig } from '../../config/agent-config.js';
import { readJsonFile } from '../../config/parse.js';
import { type InstancePaths, instancePaths, stateHome } from '../../config/paths.js';
import { configHome, loadRegistry, registryFile, unregisterInstance, validateInstanceName } from '../../config/registry.js';
import { CodedError, describeError } from '../../errors.js';
import { type Engine, connectEngine, engineSetting } from '../../sandbox/engine/engine.js';
import { LABEL } from '../../sandbox/engine/image.js';
import { removeInstanceResources } from '../../sandbox/container/remove-instance.js';
import { isProcessAlive, readLockHolder } from '../../util/process/pid-lock.js';
import { removeUntrustedTree } from '../../util/untrusted-remove.js';
import { isWithin } from '../../util/within.js';

/**
 * `kernel-runner rm`: everything agent-kernel keeps for an instance, and the instance's name.
 * It must work when the instance is half gone (its data directory deleted by hand, its
 * configuration broken), so it resolves the name itself instead of loading the instance.
 */

export interface RemovalTarget {
  name: string;
  dataDir: string;
  paths: InstancePaths;
  registered: boolean;
}

/** Where watch keeps its things for the instance (watch/service/status-api.ts, watch/service/systemd.ts). */
export interface WatchPlaces {
  /** The status socket: a watch answers /v1/health there while it runs. */
  socket: string;
  /** Whether a running watch answers at the socket. */
  answers: () => Promise<boolean>;
  /** The systemd user unit kernel-runner install writes. */
  unit: string;
}

export interface RemovalReport {
  /** What was removed, for a person, one item each. */
  removed: string[];
  /** What stays, and why. */
  kept: string[];
}

/** A registered name, or a data directory (registered or not). Never loads the instance. */
export async function findRemovalTarget(nameOrDir: string, env: NodeJS.ProcessEnv = process.env): Promise<RemovalTarget> {
  const registry = await loadRegistry(env);
  const looksLikePath = nameOrDir.includes('/') || nameOrDir === '.' || nameOrDir === '..';
  const entry = looksLikePath ? undefined : registry.instances[nameOrDir];
  if (entry) return { name: nameOrDir, dataDir: entry.dir, paths: instancePaths(nameOrDir, entry.dir, env), registered: true };
  const dataDir = path.resolve(nameOrDir);
  const isDir = await lstat(dataDir).then((s) => s.isDirectory(), () => false);
  if (!looksLikePath && !isDir) {
    validateInstanceName(nameOrDir);
    throw new CodedError('INSTANCE_NOT_FOUND', `No instance named "${nameOrDir}" (kernel-runner ls lists them).`, { details: { name: nameOrDir } });
  }
  // The same folder named another way (through a link): its registered name, whose container must go first.
  const real = await realpath(dataDir).catch(() => dataDir);
  const entries = Object.entries(registry.instances);
  const byDir = entries.find(([, e]) => e.dir === dataDir) ?? (await findAsync(entries, async ([, e]) => (await realpath(e.dir).catch(() => e.dir)) === real));
  if (byDir) return { name: byDir[0], dataDir: byDir[1].dir, paths: instancePaths(byDir[0], byDir[1].dir, env), registered: true };
  const name = nameFromDirectory(dataDir);
  const paths = instancePaths(name, dataDir, env);
  // An unregistered name is claimed by the first directory that used it (state-dir.ts): never remove another's.
  const owner = (await readFile(path.join(paths.privateState, 'data-dir'), 'utf8').catch(() => undefined))?.trim();
  if (owner !== undefined && owner !== dataDir) {
    throw new CodedError('USAGE', `The state of "${name}" belongs to ${owner}, not ${dataDir}: nothing of ${dataDir} to remove there.`);
  }
  if (!isDir && owner === undefined) throw new CodedError('INSTANCE_NOT_FOUND', `${dataDir} is not an instance: not registered, and no such directory.`);
  return { name, dataDir, paths, registered: false };
}

async function findAsync<T>(items: readonly T[], test: (item: T) => Promise<boolean>): Promise<T | undefined> {
  for (const item of items) if (await test(item)) return item;
  return undefined;
}

/** What still uses the instance: each a sentence with what to do about it. Empty: free to remove. */
export async function instanceInUse(target: RemovalTarget, watch: WatchPlaces): Promise<string[]> {
  const busy: string[] = [];
  const tick = await readLockHolder(target.paths.tickLock);
  if (tick && isProcessAlive(tick.pid)) busy.push(`a tick runs (PID ${tick.pid}): stop the watch running it (Ctrl-C, or systemctl --user stop), or wait for it to end`);
  const server = await readLockHolder(target.paths.instanceLock);
  if (server && isProcessAlive(server.pid)) busy.push(`agent-kernel serve runs for it (PID ${server.pid}): end that client (a Claude Code session, an HTTP server)`);
  if (await watch.answers()) busy.push(`kernel-runner watch runs for it: stop it (Ctrl-C, or systemctl --user stop ${path.basename(watch.unit)})`);
  if (await lstat(watch.unit).then(() => true, () => false)) busy.push(`a systemd unit runs watch for it (${watch.unit}): kernel-runner uninstall ${target.name} first`);
  return busy;
}

/** Paths that are never removed as data, whatever the registry says. */
function unremovable(dir: string, env: NodeJS.ProcessEnv): boolean {
  const home = os.homedir();
  return dir === '/' || dir === home || isWithin(home, dir) || isWithin(configHome(env), dir) || isWithin(stateHome(env), dir);
}

async function removePath(file: string, what: string, report: RemovalReport): Promise<void> {
  if (!(await lstat(file).then(() => true, () => false))) return;
  try {
    await rm(file, { recursive: true, force: true });
    report.removed.push(`${what} ${file}`);
  } catch (error) {
    report.kept.push(`${what} ${file}: ${describeError(error)} (remove it by hand, with sudo if the container wrote it as root)`);
  }
}

/** Running containers that mount `dataDir` (or a folder holding it): they can write it while it is removed. */
async function containersUsing(engine: Engine, dataDir: string): Promise<string[]> {
  const real = await realpath(dataDir).catch(() => dataDir);
  const running = await engine.docker.listContainers({ filters: { status: ['running'] } });
  return running
    .filter((c) => c.Labels[LABEL.dataDir] === dataDir || (c.Mounts ?? []).some((m) => m.Type === 'bind' && isWithin(real, m.Source)))
    .map((c) => `${c.Names[0]?.replace(/^\//, '') ?? c.Id.slice(0, 12)}${c.Labels[LABEL.instance] ? ` (instance ${c.Labels[LABEL.instance]})` : ''}`);
}

/**
 * The data directory: everything the container wrote there is hostile, so it is removed by a walk
 * that never follows a link (untrusted-remove.ts), and not at all while a container still mounts it.
 */
async function removeData(engine: Engine, dataDir: string, report: RemovalReport): Promise<void> {
  const users = await containersUsing(engine, dataDir);
  if (users.length > 0) {
    report.kept.push(`data ${dataDir}: not removed, the running container ${users.join(', ')} still uses it (remove that instance first)`);
    return;
  }
  const { removed, left } = await removeUntrustedTree(dataDir, '');
  if (removed) report.removed.push(`data ${dataDir}`);
  else report.kept.push(`data ${dataDir}: not all of it could be removed (${left.join('; ') || 'it changed while being removed'}); remove the rest by hand, with sudo if the container wrote it as root`);
}

/**
 * Remove the instance: what the engine holds for it (container, egress proxy and link, images),
 * its host-private state (logs, transcripts, recordings, archives), the operator's file, its
 * default secrets folder and HTTP token, and its registry entry; its data directory only with
 * `data`. The engine goes first (the container stops writing the data directory), the registry
 * entry last (a removal that fails midway can be run again).
 */
export async function removeInstance(
  target: RemovalTarget,
  options: { data: boolean; watchSocket: string; env?: NodeJS.ProcessEnv; onProgress?: (line: string) => void },
): Promise<RemovalReport> {
  const env = options.env ?? process.env;
  const report: RemovalReport = { removed: [], kept: [] };
  // The operator's file alone says which engine holds the container: the agent can break its own file, and the removal must not then ask another engine.
  const socket = await readJsonFile(target.paths.operatorConfig).then(
    (raw) => engineSetting(parseAgentConfig(raw, target.paths.operatorConfig).container),
    () => undefined,
  );
  const engine = await connectEngine({ socket });
  const resources = await removeInstanceResources(engine, target.name, options.onProgress, { keepData: !options.data });
  for (const container of resources.containers) report.removed.push(`container ${container}`);
  for (const volume of resources.volumes) report.removed.push(`volume ${volume}`);
  for (const image of resources.images) report.removed.push(`image ${image}`);
  report.kept.push(...resources.kept);

  await removePath(target.paths.stateRoot, 'state (logs, transcripts, recordings, terminal archives)', report);
  await removePath(target.paths.operatorConfig, "the operator's file", report);
  await removePath(path.join(configHome(env), 'secrets', target.name), 'secrets', report);
  await removePath(path.join(configHome(env), 'tokens', `${target.name}.token`), 'HTTP token', report);
  await removePath(options.watchSocket, 'status socket', report);

  if (options.data) {
    const system = await lstat(target.paths.system).catch(() => undefined);
    if (unremovable(target.dataDir, env)) report.kept.push(`data ${target.dataDir}: not removed, it holds your home or agent-kernel's own folders`);
    else if (!system?.isDirectory()) report.kept.push(`data ${target.dataDir}: not removed, it has no system/ folder (not a data repo)`);
    else await removeData(engine, target.dataDir, report);
  } else if (await lstat(target.dataDir).then(() => true, () => false)) {
    report.kept.push(`data ${target.dataDir} (kernel-runner rm ${target.name} --data removes it too)`);
  }
  if (target.registered && (await unregisterInstance(target.name, env))) report.removed.push(`the name ${target.name} from ${registryFile(env)}`);
  return report;
}
