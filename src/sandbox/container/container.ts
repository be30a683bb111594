import { createHash } from 'node:crypto';
import type Dockerode from 'dockerode';
import type { Instance } from '../../config/instance.js';
import { ensureStateDirs } from '../../config/state-dir.js';
import { CodedError, describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { knownTrapFix } from '../engine/engine-traps.js';
import { type Engine, createOrFindContainer, dataVolumeName, forceRemoveContainer, inspectNamed, isRemoteEngine, statusCode } from '../engine/engine.js';
import { ensureEgress, removeEgress } from '../egress/proxy.js';
import { hardenedCreateOptions, hostFacts } from './hardening.js';
import { type ImageRef, LABEL, type ProgressCallback, currentImageRef, imageTag, shortReference } from '../engine/image.js';
import { assertContainerOwner } from './container-owner.js';
import { ensureImage } from './instance-image.js';
import { giveDataDirTo } from './data-dir-owner.js';
import { type EngineBoundary, boundaryCreateOptions, engineBoundary, instanceBoundary } from './user-namespace.js';

/**
 * The instance's one persistent container, `agent-kernel-<name>`. It only ever runs an init
 * and `sleep infinity`; terminals are execs into it. A container with our name but without
 * our labels belongs to someone else and is never touched.
 */

export function containerName(instanceName: string): string {
  return `agent-kernel-${instanceName}`;
}

export interface ContainerStatus {
  name: string;
  exists: boolean;
  running: boolean;
  /** Engine state: created, running, paused, exited... */
  state?: string | undefined;
  id?: string | undefined;
  image?: string | undefined;
  /** The image hash the container was created from. */
  imageHash?: string | undefined;
  /** The hash the image would have now. */
  currentImageHash: string;
  /** True when the container was made from another image or config than the instance now asks for. */
  stale: boolean;
  startedAt?: string | undefined;
}

export interface LifecycleOptions {
  logger: Logger;
  onProgress?: ProgressCallback | undefined;
  /**
   * Recreate a running container whose configuration (not image, not data directory) changed:
   * `container up` does; starting a server or a tick does not (it would end the terminals
   * only because this process reads another configuration), and logs how to apply it.
   */
  recreateForConfig?: boolean;
}

/** Hostnames are `[a-z0-9-]`, at most 63 characters. */
function hostnameFor(instanceName: string): string {
  return instanceName.toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/^-+|-+$/g, '').slice(0, 63) || 'agent';
}

/** The full create options: hardening and the boundary, plus our name, image, labels and keep-alive command. */
export function createOptions(instance: Instance, image: ImageRef, boundary: EngineBoundary, remote = false): Dockerode.ContainerCreateOptions {
  const hardened = hardenedCreateOptions({
    config: instance.config.container,
    dataDir: instance.dataDir,
    shown: instance.paths.showToContainer,
    host: hostFacts(),
    configFile: instance.paths.operatorConfig,
    dataVolume: remote ? dataVolumeName(instance.name) : undefined,
  });
  hardened.HostConfig = { ...hardened.HostConfig, ...boundaryCreateOptions(instance.config.container, boundary, instance.paths.operatorConfig) };
  const configHash = createHash('sha256').update(JSON.stringify(hardened)).digest('hex').slice(0, 16);
  return {
    name: containerName(instance.name),
    Image: image.tag,
    Cmd: ['sleep', 'infinity'],
    Hostname: hostnameFor(instance.name),
    Tty: false,
    OpenStdin: false,
    Labels: {
      [LABEL.instance]: instance.name,
      [LABEL.imageHash]: image.hash,
      [LABEL.configHash]: configHash,
      [LABEL.dataDir]: instance.dataDir,
      [LABEL.stateDir]: instance.paths.stateRoot,
    },
    ...hardened,
  };
}

function notOurs(name: string, instanceName: string): CodedError {
  return new CodedError(
    'CONTAINER_FAILED',
    `A container named ${name} exists but agent-kernel did not create it (it has no ${LABEL.instance}=${instanceName} label), so it is left alone. Rename or remove it yourself (docker rm -f ${name}) or use another instance name.`,
    { details: { container: name } },
  );
}

/**
 * Inspect the instance's container; undefined when there is none. Throws when the name is taken
 * by a container that is not ours, or that another state directory owns (INSTANCE_OWNED).
 */
export async function inspectContainer(engine: Engine, instance: Instance): Promise<Dockerode.ContainerInspectInfo | undefined> {
  const name = containerName(instance.name);
  const info = await inspectNamed(engine, name);
  if (!info) return undefined;
  if (info.Config.Labels?.[LABEL.instance] !== instance.name) throw notOurs(name, instance.name);
  assertContainerOwner(info, instance.name, instance.paths);
  return info;
}

function statusFrom(name: string, info: Dockerode.ContainerInspectInfo | undefined, currentHash: string, wanted?: Dockerode.ContainerCreateOptions): ContainerStatus {
  if (!info) return { name, exists: false, running: false, currentImageHash: currentHash, stale: false };
  const labels = info.Config.Labels ?? {};
  const stale =
    labels[LABEL.imageHash] !== currentHash ||
    (wanted !== undefined && (labels[LABEL.configHash] !== wanted.Labels?.[LABEL.configHash] || labels[LABEL.dataDir] !== wanted.Labels?.[LABEL.dataDir]));
  return {
    name,
    exists: true,
    running: info.State.Running,
    state: info.State.Status,
    id: info.Id,
    image: info.Config.Image,
    imageHash: labels[LABEL.imageHash],
    currentImageHash: currentHash,
    stale,
    startedAt: info.State.StartedAt,
  };
}

/** Where the container stands, without changing anything (and without building). */
export async function containerStatus(engine: Engine, instance: Instance): Promise<ContainerStatus> {
  const { hash } = await currentImageRef(instance);
  return statusFrom(containerName(instance.name), await inspectContainer(engine, instance), hash);
}

/** True when `container up` would recreate the container (its image, config or policy changed). */
export async function isContainerStale(engine: Engine, instance: Instance): Promise<boolean> {
  const image = await currentImageRef(instance);
  return statusFrom(containerName(instance.name), await inspectContainer(engine, instance), image.hash, createOptions(instance, image, await engineBoundary(engine), isRemoteEngine(engine))).stale;
}

/**
 * On a remote engine the data directory is a volume there, made once with our labels and kept
 * across recreations of the container (only `remove --data` removes it). A volume of that name
 * without our label is someone else's and is not used.
 */
async function ensureDataVolume(engine: Engine, instance: Instance): Promise<void> {
  const name = dataVolumeName(instance.name);
  const found = (await engine.docker
    .getVolume(name)
    .inspect()
    .catch((error: unknown) => {
      if (statusCode(error) === 404) return undefined;
      throw new CodedError('CONTAINER_FAILED', `Cannot inspect the volume ${name} on ${engine.address}: ${describeError(error)}`, { cause: error });
    })) as { Labels?: Record<string, string> | null } | undefined;
  if (found) {
    if (found.Labels?.[LABEL.instance] !== instance.name) {
      throw new CodedError('CONTAINER_FAILED', `A volume named ${name} exists on ${engine.address} but agent-kernel did not make it (it has no ${LABEL.instance}=${instance.name} label), so it is left alone. Remove or rename it there, or use another instance name.`);
    }
    return;
  }
  await engine.docker.createVolume({ Name: name, Labels: { [LABEL.instance]: instance.name, [LABEL.dataDir]: instance.dataDir, [LABEL.stateDir]: instance.paths.stateRoot } });
}

async function removeContainer(engine: Engine, id: string): Promise<void> {
  try {
    await forceRemoveContainer(engine, id);
  } catch (error) {
    if (statusCode(error) !== 404) throw new CodedError('CONTAINER_FAILED', `Cannot remove container ${id.slice(0, 12)}: ${describeError(error)}`, { cause: error });
  }
}

async function createContainer(engine: Engine, options: Dockerode.ContainerCreateOptions & { name: string }, instance: Instance): Promise<void> {
  const { created } = await createOrFindContainer(engine, options);
  // Another process for this instance created it first: fine if it is ours (inspectContainer refuses a stranger).
  if (!created) await inspectContainer(engine, instance);
}

async function startContainer(engine: Engine, name: string): Promise<void> {
  try {
    await engine.docker.getContainer(name).start();
  } catch (error) {
    if (statusCode(error) === 304) return; // already started
    const fix = knownTrapFix(describeError(error));
    throw new CodedError(
      'CONTAINER_FAILED',
      `Cannot start container ${name}: ${describeError(error)}\n${fix ? `Fix: ${fix}.` : "See the engine's log; agent-kernel doctor checks the set-up."}`,
      { cause: error },
    );
  }
}

/**
 * Make the container run: build the image if its context changed, create the container
 * when missing, recreate it when stale (other image, config or data dir), start it when
 * stopped, and set up its egress. Returns its status afterwards.
 */
export async function containerUp(engine: Engine, instance: Instance, options: LifecycleOptions, force = false): Promise<ContainerStatus> {
  return (await containerUpInStages(engine, instance, options, force)).finished;
}

/**
 * containerUp in two stages: resolves once the container runs (execs work), with `finished`
 * for the rest (its egress proxy, the proxy settings inside it, pruning after a recreate),
 * so that a caller can start its terminals meanwhile. `finished` must be awaited.
 */
export async function containerUpInStages(engine: Engine, instance: Instance, options: LifecycleOptions, force = false): Promise<{ finished: Promise<ContainerStatus>; recreated: boolean }> {
  const { logger, onProgress } = options;
  const name = containerName(instance.name);
  // Refuse a bad config before spending a build on it.
  hardenedCreateOptions({
    config: instance.config.container,
    dataDir: instance.dataDir,
    shown: instance.paths.showToContainer,
    host: hostFacts(),
    configFile: instance.paths.operatorConfig,
  });
  const image = await ensureImage(engine, instance, { logger, onProgress, force });
  const boundary = await engineBoundary(engine);
  const remote = isRemoteEngine(engine);
  const wanted = createOptions(instance, image, boundary, remote);
  if (remote) await ensureDataVolume(engine, instance);
  // Remapped container root owns the data directory (and makes the read-only views' mount points in it).
  else if (instanceBoundary(instance.config.container, boundary) === 'userns-remap' && boundary.hostIds) {
    const ids = boundary.hostIds;
    const shifted = await giveDataDirTo(instance.dataDir, ids).catch((error: unknown) => {
      throw new CodedError(
        'CONTAINER_FAILED',
        `Cannot give the data directory ${instance.dataDir} to the remapped container root (host uid ${ids.uid}): ${describeError(error)}. ` +
          `Run chown -R ${ids.uid}:${ids.gid} ${instance.dataDir}, or set container.boundary "none" in ${instance.paths.operatorConfig} (container root is then host root).`,
        { cause: error },
      );
    });
    if (shifted > 0) logger.info({ dataDir: instance.dataDir, entries: shifted, uid: boundary.hostIds.uid }, 'gave the data directory to the remapped container root');
  }
  let info = await inspectContainer(engine, instance);
  const had = info?.Config.Labels ?? {};
  const changed = [
    had[LABEL.imageHash] !== image.hash && 'image',
    had[LABEL.configHash] !== wanted.Labels?.[LABEL.configHash] && 'configuration',
    had[LABEL.dataDir] !== wanted.Labels?.[LABEL.dataDir] && 'data directory',
  ].filter(Boolean);
  // Only the configuration differs and terminals may live in it: keep it (container up applies it).
  const keptForTerminals = info !== undefined && !force && info.State.Running && changed.length === 1 && changed[0] === 'configuration' && options.recreateForConfig !== true;
  if (keptForTerminals) {
    logger.warn(
      { container: name, operatorConfig: instance.paths.operatorConfig },
      `${name} runs with another configuration than ${instance.paths.operatorConfig} gives; it is kept, with its terminals. agent-kernel container up ${instance.name} recreates it with this one (its terminals end).`,
    );
  }
  const recreated = info !== undefined && !keptForTerminals && (force || statusFrom(name, info, image.hash, wanted).stale);
  if (info && recreated) {
    onProgress?.(`recreating ${name} (${force ? 'rebuild' : 'its image or config changed'})`);
    // Why, in the log: two processes that disagree (another config home) would recreate it at each start.
    logger.info({ container: name, why: force ? 'rebuild' : `${changed.join(', ')} changed` }, 'recreating container');
    await removeContainer(engine, info.Id);
    info = undefined;
  }
  if (!info) {
    onProgress?.(`creating ${name}`);
    await ensureStateDirs(instance.paths); // the read-only mounts' sources must exist

    await createContainer(engine, { ...wanted, name }, instance);
    info = await inspectContainer(engine, instance);
  }
  const runningAsFound = info !== undefined && info.State.Running && !info.State.Paused;
  if (info?.State.Paused) await engine.docker.getContainer(name).unpause();
  else if (!info?.State.Running) {
    onProgress?.(`starting ${name}`);
    await startContainer(engine, name);
  }
  // A container found running and left alone was just inspected: no second round trip at every start-up.
  const after = runningAsFound ? info : await inspectContainer(engine, instance);
  if (!after?.State.Running) {
    throw new CodedError('CONTAINER_FAILED', `Container ${name} does not stay up (state: ${after?.State.Status ?? 'gone'}). Its log: docker logs ${name}`);
  }
  const finished = (async () => {
    await ensureEgress(engine, instance, after, { logger, onProgress });
    if (recreated) {
      // The old image is now unused: remove it (and anything else of ours that is stale).
      await prune(engine, instance, { logger }).catch((error: unknown) => logger.warn({ err: error }, 'prune after recreate failed'));
    }
    return statusFrom(name, after, image.hash, wanted);
  })();
  return { finished, recreated };
}

/** Stop and remove the container. The data directory is untouched. */
export async function containerDown(engine: Engine, instance: Instance, options: LifecycleOptions): Promise<ContainerStatus> {
  const info = await inspectContainer(engine, instance);
  await removeEgress(engine, instance);
  if (info) {
    options.onProgress?.(`removing ${info.Name.replace(/^\//, '')}`);
    if (info.State.Running) {
      await engine.docker
        .getContainer(info.Id)
        .stop({ t: 5 })
        .catch((error: unknown) => {
          if (statusCode(error) !== 304 && statusCode(error) !== 404) throw error;
        });
    }
    await removeContainer(engine, info.Id);
  }
  return containerStatus(engine, instance);
}

/** Rebuild the image without cache, then recreate the container from it. */
export function containerRebuild(engine: Engine, instance: Instance, options: LifecycleOptions): Promise<ContainerStatus> {
  return containerUp(engine, instance, options, true);
}

export interface PruneResult {
  removedContainers: string[];
  removedImages: string[];
  /** What was left alone and why. */
  kept: string[];
}

/**
 * Remove this instance's stale containers (not running) and its images that nothing uses
 * and that are not the current one. Goes by our labels only: nothing without
 * `agent-kernel.instance=<this name>` is ever looked at.
 */
export async function prune(engine: Engine, instance: Instance, options: LifecycleOptions): Promise<PruneResult> {
  const { hash } = await currentImageRef(instance);
  const filter = { label: [`${LABEL.instance}=${instance.name}`] };
  const result: PruneResult = { removedContainers: [], removedImages: [], kept: [] };

  const containers = await engine.docker.listContainers({ all: true, filters: filter });
  for (const c of containers) {
    if (c.Labels[LABEL.instance] !== instance.name) continue;
    // Egress containers are kept in step by ensureEgress, not by image hash.
    if (c.Labels[LABEL.egressRole] !== undefined) continue;
    const label = c.Names[0]?.replace(/^\//, '') ?? c.Id.slice(0, 12);
    if (c.Labels[LABEL.imageHash] === hash) continue;
    if (c.State === 'running') {
      result.kept.push(`${label}: stale but running (agent-kernel container up ${instance.name} recreates it)`);
      continue;
    }
    await removeContainer(engine, c.Id);
    result.removedContainers.push(label);
    options.onProgress?.(`removed container ${label}`);
  }

  const inUse = new Set((await engine.docker.listContainers({ all: true })).map((c) => c.ImageID));
  const currentTag = imageTag(instance.name, hash);
  const images = await engine.docker.listImages({ filters: filter });
  for (const image of images) {
    if (image.Labels?.[LABEL.instance] !== instance.name) continue;
    const tags = (image.RepoTags ?? []).filter((t) => t !== '<none>:<none>');
    // The current image is the one carrying the current tag; a rebuild leaves the old one untagged.
    if (tags.some((t) => shortReference(t) === currentTag)) continue;
    const label = tags[0] ? shortReference(tags[0]) : `${image.Id.replace(/^sha256:/, '').slice(0, 12)} (untagged)`;
    if (inUse.has(image.Id)) {
      result.kept.push(`${label}: used by a container`);
      continue;
    }
    try {
      for (const tag of tags) await engine.docker.getImage(tag).remove();
      if (tags.length === 0) await engine.docker.getImage(image.Id).remove();
      result.removedImages.push(label);
      options.onProgress?.(`removed image ${label}`);
    } catch (error) {
      if (statusCode(error) === 404) continue;
      result.kept.push(`${label}: ${describeError(error)}`);
    }
  }
  return result;
}
