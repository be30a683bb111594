import { containerName } from './container.js';
import { type Engine, dataVolumeName, forceRemoveContainer, statusCode } from '../engine/engine.js';
import { LABEL } from '../engine/image.js';

export interface RemovedResources {
  containers: string[];
  volumes: string[];
  images: string[];
  /** What carries the instance's name but not its label: never touched. */
  kept: string[];
}

const ignoreMissing = (error: unknown): void => {
  if (statusCode(error) !== 404) throw error;
};

/**
 * Remove everything the engine holds for an instance, and nothing else: its container, the egress
 * proxy and link, their socket volume, and every image built for it; each only when it carries
 * the instance's label. The data directory is not touched.
 */
export async function removeInstanceResources(engine: Engine, name: string, onProgress?: (line: string) => void, options: { keepData?: boolean } = {}): Promise<RemovedResources> {
  const { docker } = engine;
  const removed: RemovedResources = { containers: [], volumes: [], images: [], kept: [] };
  const label = { label: [`${LABEL.instance}=${name}`] };
  const containers = await docker.listContainers({ all: true, filters: label });
  for (const c of containers) {
    if (c.Labels[LABEL.instance] !== name) continue;
    const shown = c.Names[0]?.replace(/^\//, '') ?? c.Id.slice(0, 12);
    await forceRemoveContainer(engine, c.Id).catch(ignoreMissing);
    removed.containers.push(shown);
    onProgress?.(`removed container ${shown}`);
  }
  const stranger = await docker
    .getContainer(containerName(name))
    .inspect()
    .catch((error: unknown) => void ignoreMissing(error));
  if (stranger && stranger.Config.Labels?.[LABEL.instance] !== name) removed.kept.push(`${containerName(name)}: not created by agent-kernel (no ${LABEL.instance}=${name} label)`);
  const { Volumes: volumes } = await docker.listVolumes({ filters: label });
  for (const v of volumes ?? []) {
    if (v.Labels?.[LABEL.instance] !== name) continue;
    // The data directory of an instance on a remote engine: removed only when asked (rm --data).
    if (options.keepData && v.Name === dataVolumeName(name)) {
      removed.kept.push(`volume ${v.Name} on ${engine.address}: the agent's data directory (kernel-runner rm ${name} --data removes it too)`);
      continue;
    }
    await docker.getVolume(v.Name).remove().catch(ignoreMissing);
    removed.volumes.push(v.Name);
    onProgress?.(`removed volume ${v.Name}`);
  }
  for (const image of await docker.listImages({ filters: label })) {
    if (image.Labels?.[LABEL.instance] !== name) continue;
    const tags = (image.RepoTags ?? []).filter((t) => t !== '<none>:<none>');
    // noprune: untagged parent layers stay, because a build running at the same time may be reusing them.
    for (const reference of [...tags, image.Id]) await removeImage(engine, reference, name);
    const shown = tags[0] ?? `${image.Id.replace(/^sha256:/, '').slice(0, 12)} (untagged)`;
    removed.images.push(shown);
    onProgress?.(`removed image ${shown}`);
  }
  return removed;
}

/** Remove one image; a labelled container still using it (created while we listed) is removed first, once. */
async function removeImage(engine: Engine, reference: string, name: string): Promise<void> {
  const image = engine.docker.getImage(reference);
  try {
    await image.remove({ noprune: true });
  } catch (error) {
    if (statusCode(error) === 404) return;
    if (statusCode(error) !== 409) throw error;
    const users = await engine.docker.listContainers({ all: true, filters: { ancestor: [reference], label: [`${LABEL.instance}=${name}`] } });
    if (users.length === 0) throw error;
    for (const c of users) await forceRemoveContainer(engine, c.Id).catch(ignoreMissing);
    await image.remove({ noprune: true }).catch(ignoreMissing);
  }
}
