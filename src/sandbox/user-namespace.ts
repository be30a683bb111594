import type { Engine } from './engine.js';

/**
 * Whether root in the container is root on the host. By default (a rootful engine without
 * user-namespace remapping) it is: the membrane then rests on the hardening alone (no
 * capabilities beyond a short list, no-new-privileges, seccomp, nothing of the host mounted).
 * With `dockerd --userns-remap` or a rootless engine, container root is an unprivileged host user.
 */
export type RootMapping = 'host-root' | 'remapped' | 'rootless';

/** Pure: the engine's `SecurityOptions` (`name=userns`, `name=rootless`, ...) → the mapping. */
export function rootMappingOf(securityOptions: readonly string[]): RootMapping {
  const names = securityOptions.map((option) => /(?:^|,)name=([^,]+)/.exec(option)?.[1]);
  if (names.includes('rootless')) return 'rootless';
  if (names.includes('userns')) return 'remapped';
  return 'host-root';
}

export async function engineRootMapping(engine: Engine): Promise<RootMapping> {
  const info = (await engine.docker.info()) as { SecurityOptions?: string[] };
  return rootMappingOf(info.SecurityOptions ?? []);
}
