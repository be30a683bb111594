/**
 * The limits every container the kernel creates runs with: the agent's, the egress proxy's
 * and preflight's probe. Here, below both the hardening and the egress proxy, so neither imports the other for them.
 */
export const ULIMIT_NOFILE = 16_384;
/** Per user on the host for rootful engines (root inside is root outside), so generous; PidsLimit is the real cap. */
export const ULIMIT_NPROC = 32_768;

export const CONTAINER_ULIMITS = [
  { Name: 'nofile', Soft: ULIMIT_NOFILE, Hard: ULIMIT_NOFILE },
  { Name: 'nproc', Soft: ULIMIT_NPROC, Hard: ULIMIT_NPROC },
];
