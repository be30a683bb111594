import type { Instance } from '../../config/instance.js';
import type { Logger } from '../../log/logger.js';
import { containerName, containerUpInStages } from './container.js';
import { DockerSandbox } from '../docker-sandbox.js';
import { type Engine, connectEngine, engineSetting, isRemoteEngine } from '../engine/engine.js';
import { showFolderInContainer } from '../files/show-folder.js';
import { hardenedCreateOptions, hostFacts } from './hardening.js';
import { HostSandbox } from '../host-sandbox.js';
import { assertNotSuspended } from './suspended.js';
import type { ProgressCallback } from '../engine/image.js';
import type { Sandbox } from '../sandbox.js';

export interface OpenSandboxOptions {
  logger: Logger;
  /** Build and start-up progress, one line at a time (the CLI prints them). */
  onProgress?: ProgressCallback;
}

export interface OpenedSandbox {
  /** Usable for processes now. */
  sandbox: Sandbox;
  /** Resolves when the rest is in place too (egress proxy, the proxy settings inside the container); must be awaited. */
  finished: Promise<void>;
  /** The container was made anew (its image changed): terminals that lived in the old one are gone. */
  recreated: boolean;
}

const opening = new Map<string, Promise<OpenedSandbox>>();

/**
 * The one way to get an instance's sandbox. `docker` (the default): connect to the engine,
 * build the image if its Containerfile changed, make sure the container runs, and set up its
 * egress. `host`: this machine. Concurrent calls for the same instance share one start-up.
 */
export async function openSandbox(instance: Instance, options: OpenSandboxOptions): Promise<Sandbox> {
  const { sandbox, finished } = await openSandboxInStages(instance, options);
  await finished;
  return sandbox;
}

/**
 * openSandbox in two stages: the sandbox as soon as its processes can start, and `finished`
 * for the rest, so that the server re-adopts its terminals while the egress is checked.
 */
export function openSandboxInStages(instance: Instance, options: OpenSandboxOptions): Promise<OpenedSandbox> {
  const config = instance.config.container;
  if (config.backend === 'host') return Promise.resolve({ sandbox: new HostSandbox({ cwd: instance.dataDir, env: config.env }), finished: Promise.resolve(), recreated: false });

  const key = `${instance.name}\0${instance.dataDir}`;
  const pending = opening.get(key);
  if (pending) return pending;
  const open = (async (): Promise<OpenedSandbox> => {
    // Only a resume makes the container of a suspended instance (from its snapshot), never a fresh one from the image.
    await assertNotSuspended(instance.name, instance.paths);
    // A refused config fails here, before the engine is even asked.
    hardenedCreateOptions({ config, dataDir: instance.dataDir, host: hostFacts(), configFile: instance.paths.operatorConfig });
    const engine = await connectEngine({ socket: engineSetting(config) });
    const stages = await containerUpInStages(engine, instance, { logger: options.logger, onProgress: options.onProgress });
    const finished = stages.finished.then(() => undefined);
    finished.catch(() => undefined); // rejects for whoever awaits it, not as an unhandled rejection meanwhile
    const sandbox = dockerSandbox(engine, instance);
    return { sandbox, finished, recreated: stages.recreated };
  })();
  // Shared until it is fully up: a second caller must not start a second set-up meanwhile.
  const settled = open.then(({ finished }) => finished);
  void settled.catch(() => undefined).finally(() => opening.delete(key));
  opening.set(key, open);
  return open;
}

/**
 * The sandbox of an instance as it is now, for an operator tool that must not change it
 * (the web view typing for a person): never builds, never starts a container.
 */
export async function attachSandbox(instance: Instance): Promise<Sandbox> {
  const config = instance.config.container;
  if (config.backend === 'host') return new HostSandbox({ cwd: instance.dataDir, env: config.env });
  const engine = await connectEngine({ socket: engineSetting(config) });
  return dockerSandbox(engine, instance);
}

/** The instance's container as a sandbox; on a remote engine it can also show host folders (by copying them in). */
function dockerSandbox(engine: Engine, instance: Instance): DockerSandbox {
  const config = instance.config.container;
  const name = containerName(instance.name);
  const showHostFolder = isRemoteEngine(engine) ? (source: string, target: string) => showFolderInContainer(engine, name, source, target, instance.dataDir) : undefined;
  return new DockerSandbox({ engine, containerName: name, cwd: instance.dataDir, user: config.user, env: config.env, ...(showHostFolder ? { showHostFolder } : {}) });
}
