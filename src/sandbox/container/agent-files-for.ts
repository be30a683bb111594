import type { Instance } from '../../config/instance.js';
import { CodedError } from '../../errors.js';
import { type AgentEntry, type AgentFiles, LocalAgentFiles } from '../../util/agent-files.js';
import type { MoveOutcome } from '../../util/untrusted-write.js';
import { containerName } from './container.js';
import { connectEngine, dataVolumeName, engineCandidates, engineSetting, isRemoteEngine } from '../engine/engine.js';
import { EngineAgentFiles } from '../files/engine-files.js';

/**
 * The agent's files of an instance, on whichever side of the engine they are: a host folder
 * (the host backend, or a local engine, which bind-mounts it), or the volume on a remote engine.
 * The engine is connected on first use, so that this can be chosen where nothing may wait.
 */
export function agentFilesFor(instance: Instance, env: NodeJS.ProcessEnv = process.env): AgentFiles {
  const address = remoteEngineOf(instance, env);
  return address === undefined ? new LocalAgentFiles(instance.dataDir) : new RemoteAgentFiles(instance, address, env);
}

/** The remote engine's address when the instance runs on one (its data directory is a volume there); else undefined. */
export function remoteEngineOf(instance: Instance, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const config = instance.config.container;
  if (config.backend === 'host') return undefined;
  const address = engineCandidates(engineSetting(config), env)[0] ?? '';
  return isRemoteEngine({ address }) ? address : undefined;
}

/**
 * The refusal of a consumer of the agent's files that does not go through AgentFiles yet: on a
 * remote engine it would read or write this machine's folder, which is not the agent's.
 */
export function notOnRemoteEngine(instance: Instance, what: string, env: NodeJS.ProcessEnv = process.env): void {
  const address = remoteEngineOf(instance, env);
  if (address === undefined) return;
  throw new CodedError(
    'CONFIG_REFUSED',
    `Not available on a remote engine yet: ${what}. The data directory of ${instance.name} is the volume ${dataVolumeName(instance.name)} on ${address}, ` +
      `and this works only on a data directory that is a folder of this machine. Run the instance on a local engine (container.engine in ${instance.paths.operatorConfig}) to use it.`,
  );
}

/** EngineAgentFiles, once the engine answers. */
class RemoteAgentFiles implements AgentFiles {
  readonly local = false;
  readonly where: string;
  private inner: Promise<EngineAgentFiles> | undefined;

  constructor(
    private readonly instance: Instance,
    private readonly address: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.where = `volume ${dataVolumeName(instance.name)} on ${address}`;
  }

  private files(): Promise<EngineAgentFiles> {
    this.inner ??= connectEngine({ socket: this.address, env: this.env }).then(
      (engine) => new EngineAgentFiles({ engine, container: containerName(this.instance.name), dataDir: this.instance.dataDir, volume: dataVolumeName(this.instance.name) }),
    );
    // A failed connection is tried again next time.
    this.inner.catch(() => (this.inner = undefined));
    return this.inner;
  }

  async read(rel: string, options: { maxBytes: number }): Promise<Uint8Array | undefined> {
    return (await this.files()).read(rel, options);
  }
  async names(rel: string): Promise<string[] | undefined> {
    return (await this.files()).names(rel);
  }
  async list(rel: string, options?: { limit?: number }): Promise<AgentEntry[] | undefined> {
    return (await this.files()).list(rel, options);
  }
  async writeNew(rel: string, data: Uint8Array | string, mode?: number): Promise<boolean> {
    return (await this.files()).writeNew(rel, data, mode);
  }
  async writeAtomic(rel: string, data: Uint8Array | string, mode?: number): Promise<void> {
    return (await this.files()).writeAtomic(rel, data, mode);
  }
  async move(from: string, to: string): Promise<MoveOutcome> {
    return (await this.files()).move(from, to);
  }
  async remove(rel: string): Promise<boolean> {
    return (await this.files()).remove(rel);
  }
  async makeDirs(rel: string): Promise<void> {
    return (await this.files()).makeDirs(rel);
  }
}
