import path from 'node:path';
import type Dockerode from 'dockerode';
import type { InstancePaths } from '../../config/paths.js';
import { CodedError } from '../../errors.js';
import { LABEL } from '../engine/image.js';

/**
 * Which state directory owns an instance's container. The host sets it when it creates the
 * container (a label, which nothing inside the container can change), and only a process
 * whose state directory is that one may drive the container's terminals or recreate it:
 * the instance lock lives in the state directory, so two processes with different state
 * directories would otherwise each think they alone own the instance.
 */

/** The instance state folder (`<stateHome>/instances/<name>`) that owns the container; undefined when it cannot be told. */
export function containerOwner(info: Dockerode.ContainerInspectInfo, paths: Pick<InstancePaths, 'shownSessions'>): string | undefined {
  const label = info.Config.Labels?.[LABEL.stateDir];
  if (label) return label;
  // Made before the label: the read-only view of the sessions folder comes from <owner>/sessions.
  const source = info.Mounts?.find((m) => m.Destination === paths.shownSessions)?.Source;
  return source ? path.dirname(source) : undefined;
}

/** Refuse to touch a container another state directory owns (INSTANCE_OWNED, naming both and the fix). */
export function assertContainerOwner(info: Dockerode.ContainerInspectInfo, name: string, paths: Pick<InstancePaths, 'stateRoot' | 'shownSessions'>): void {
  const owner = containerOwner(info, paths);
  if (owner === undefined || path.resolve(owner) === path.resolve(paths.stateRoot)) return;
  const ownerHome = path.dirname(path.dirname(owner));
  const container = info.Name.replace(/^\//, '');
  throw new CodedError(
    'INSTANCE_OWNED',
    `The container ${container} of instance "${name}" belongs to the state directory ${owner}, and this process uses ${paths.stateRoot}, so it leaves the container and its terminals alone. ` +
      `Run it with the owner's state directory (AGENT_KERNEL_STATE_DIR=${ownerHome}, or the XDG_STATE_HOME that gives it, as the owner's commands do). ` +
      `To move the instance to this state directory instead, stop the owner and run agent-kernel container rm ${name} (its terminals end).`,
    { details: { container, owner, stateRoot: paths.stateRoot, env: 'AGENT_KERNEL_STATE_DIR' } },
  );
}
