import type { Instance } from '../config/instance.js';
import type { Logger } from '../log/logger.js';
import { containerName, containerUp } from './container.js';
import { DockerSandbox } from './docker-sandbox.js';
import { connectEngine } from './engine.js';
import { hardenedCreateOptions, hostFacts } from './hardening.js';
import { HostSandbox } from './host-sandbox.js';
import type { ProgressCallback } from './image.js';
import type { Sandbox } from './sandbox.js';

export interface OpenSandboxOptions {
  logger: Logger;
  /** Build and start-up progress, one line at a time (the CLI prints them). */
  onProgress?: ProgressCallback;
}

const opening = new Map<string, Promise<Sandbox>>();

/**
 * The one way to get an instance's sandbox. `docker` (the default): connect to the engine,
 * build the image if its Containerfile changed, and make sure the container runs.
 * `host`: this machine. Concurrent calls for the same instance share one start-up.
 */
export function openSandbox(instance: Instance, options: OpenSandboxOptions): Promise<Sandbox> {
  const config = instance.config.container;
  if (config.backend === 'host') return Promise.resolve(new HostSandbox({ cwd: instance.dataDir, env: config.env }));

  const key = `${instance.name}\0${instance.dataDir}`;
  const pending = opening.get(key);
  if (pending) return pending;
  const open = (async (): Promise<Sandbox> => {
    // A refused config fails here, before the engine is even asked.
    hardenedCreateOptions({ config, dataDir: instance.dataDir, host: hostFacts(), configFile: instance.paths.operatorConfig });
    const engine = await connectEngine({ socket: config.engine_socket });
    await containerUp(engine, instance, { logger: options.logger, onProgress: options.onProgress });
    return new DockerSandbox({ engine, containerName: containerName(instance.name), cwd: instance.dataDir, user: config.user, env: config.env });
  })().finally(() => opening.delete(key));
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
  const engine = await connectEngine({ socket: config.engine_socket });
  return new DockerSandbox({ engine, containerName: containerName(instance.name), cwd: instance.dataDir, user: config.user, env: config.env });
}
