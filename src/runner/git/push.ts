import { mkdir, realpath, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BRANCH_NAME, type PushConfig } from '../../config/agent-config.js';
import type { Logger } from '../../log/logger.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { gitErrorLine, hostGit, hostGitEnv, parsePushPorcelain } from './host-git.js';
import { hasBundleSignature, receiveStdout } from './receive-bundle.js';

/**
 * The post-tick push (seed 000), without host git ever opening the data repo: the container
 * bundles the agent's branch (`git bundle create -`, streamed to host-private state), a
 * host-owned bare mirror fetches from that bundle, and the mirror pushes to the remote named in
 * operator configuration with the host's keys. No hook, config, include, alternate or helper of
 * the data repo runs on the host; the bundle is only data, checked by fsck on the way in.
 */

export type PushOutcome =
  | { status: 'off' }
  | { status: 'nothing'; branch: string; reason: string }
  | { status: 'pushed' | 'up-to-date'; branch: string; commit: string }
  | { status: 'rejected'; branch: string; reason: string }
  | { status: 'failed'; step: 'remote' | 'bundle' | 'mirror' | 'push'; reason: string };

export interface PushOptions {
  sandbox: Sandbox;
  dataDir: string;
  /** Host-private folder for the mirror and the incoming bundle (`<kernel state>/push`). */
  workDir: string;
  config: PushConfig | undefined;
  /** The operator's environment (HOME, SSH agent...): host git's config and keys come from it. */
  env: NodeJS.ProcessEnv;
  logger: Logger;
}

const CONTAINER_GIT_MS = 30_000;
const TRANSFER_MS = 10 * 60_000;
const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** Best effort: never throws; logs what happened and returns it. */
export async function pushAgentBranch(options: PushOptions): Promise<PushOutcome> {
  const outcome = await push(options).catch((error: unknown): PushOutcome => ({ status: 'failed', step: 'mirror', reason: (error as Error).message }));
  logOutcome(options, outcome);
  return outcome;
}

async function push(options: PushOptions): Promise<PushOutcome> {
  const { config, sandbox, dataDir } = options;
  if (!config) return { status: 'off' };
  const refused = await remoteInsideData(config.remote, dataDir);
  if (refused) return { status: 'failed', step: 'remote', reason: refused };

  // In the container, as the agent: its repo, its config, its hooks stay there.
  const containerGit = (args: string[]) => sandbox.run(['git', '-c', 'safe.directory=*', '-C', dataDir, ...args], { timeoutMs: CONTAINER_GIT_MS });
  const branch = config.branch ?? (await currentBranch(containerGit)) ?? 'main';
  const ref = `refs/heads/${branch}`;
  const env = hostGitEnv(options.env);
  const mirror = path.join(options.workDir, 'mirror.git');
  await mkdir(options.workDir, { recursive: true, mode: 0o700 });
  const mirrorError = await ensureMirror(mirror, env);
  if (mirrorError) return { status: 'failed', step: 'mirror', reason: mirrorError };

  const known = await mirrorTip(mirror, ref, env);
  const agentTip = (await containerGit(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).stdout.trim();
  if (!SHA.test(agentTip)) return { status: 'nothing', branch, reason: `the data repo has no branch ${branch} (no commit yet?)` };
  if (agentTip !== known) {
    const fetched = await fetchAgentBranch(options, containerGit, mirror, ref, known, env);
    if (fetched) return fetched;
  }

  const commit = await mirrorTip(mirror, ref, env);
  if (!commit) return { status: 'failed', step: 'mirror', reason: `the mirror has no ${ref} after fetching it` };
  const pushed = await hostGit(mirror, ['push', '--porcelain', ...(config.force ? ['--force'] : []), config.remote, `${ref}:${ref}`], env, TRANSFER_MS);
  const result = parsePushPorcelain(pushed.stdout)[0];
  if (pushed.code === 0) return { status: result?.flag === 'up-to-date' ? 'up-to-date' : 'pushed', branch, commit };
  if (result?.flag === 'rejected') return { status: 'rejected', branch, reason: result.summary };
  return { status: 'failed', step: 'push', reason: gitErrorLine(pushed.stderr) };
}

type ContainerGit = (args: string[]) => Promise<{ exitCode: number; stdout: string }>;

/** The data repo's checked-out branch, as the container reports it: untrusted, so only a plain branch name is taken. */
async function currentBranch(containerGit: ContainerGit): Promise<string | undefined> {
  const result = await containerGit(['symbolic-ref', '--quiet', '--short', 'HEAD']);
  const name = result.stdout.trim();
  return result.exitCode === 0 && BRANCH_NAME.test(name) ? name : undefined;
}

/** Bundle the branch in the container (only what the mirror lacks when it can) and fetch it into the mirror. */
async function fetchAgentBranch(options: PushOptions, containerGit: ContainerGit, mirror: string, ref: string, known: string | undefined, env: NodeJS.ProcessEnv): Promise<PushOutcome | undefined> {
  const branch = ref.slice('refs/heads/'.length);
  const bundle = path.join(options.workDir, 'incoming.bundle');
  await rm(bundle, { force: true });
  const maxBytes = (options.config?.max_bundle_mb ?? 1024) * 1024 * 1024;
  const create = (exclude: string[]) =>
    receiveStdout(options.sandbox, ['git', '-c', 'safe.directory=*', '-C', options.dataDir, 'bundle', 'create', '--quiet', '-', ref, ...exclude], {
      file: bundle,
      maxBytes,
      timeoutMs: TRANSFER_MS,
    });
  // Only the commits after what the mirror already has; a rewritten history (base unknown there) gets a full bundle.
  const incremental = known && (await containerGit(['cat-file', '-e', `${known}^{commit}`])).exitCode === 0;
  let received = await create(incremental ? [`^${known}`] : []);
  if (!received.ok && !received.limit && incremental) received = await create([]);
  if (!received.ok) return { status: 'failed', step: 'bundle', reason: `the container's bundle of ${branch} was refused: ${received.reason}` };
  try {
    if (!(await hasBundleSignature(bundle))) return { status: 'failed', step: 'bundle', reason: `what the container sent for ${branch} is not a git bundle` };
    const fetched = await hostGit(mirror, ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', bundle, `+${ref}:${ref}`], env, TRANSFER_MS);
    if (fetched.code !== 0) return { status: 'failed', step: 'bundle', reason: `the bundle of ${branch} does not fetch: ${gitErrorLine(fetched.stderr)}` };
    // Full bundles pile up packs: let git repack the mirror now and then.
    await hostGit(mirror, ['gc', '--auto', '--quiet'], env, TRANSFER_MS);
    return undefined;
  } finally {
    await rm(bundle, { force: true });
  }
}

/** A bare repository the runner made and only the runner writes: no hooks, no alternates, no remotes. */
async function ensureMirror(mirror: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (await stat(path.join(mirror, 'HEAD')).then(() => true, () => false)) return undefined;
  await rm(mirror, { recursive: true, force: true });
  // --template= : no sample hooks, nothing from the operator's template directory.
  const made = await hostGit(mirror, ['init', '--quiet', '--bare', '--template='], env, CONTAINER_GIT_MS);
  return made.code === 0 ? undefined : `cannot create the mirror ${mirror}: ${gitErrorLine(made.stderr)}`;
}

async function mirrorTip(mirror: string, ref: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const result = await hostGit(mirror, ['rev-parse', '--verify', '--quiet', ref], env, CONTAINER_GIT_MS);
  const sha = result.stdout.trim();
  return result.code === 0 && SHA.test(sha) ? sha : undefined;
}

/** Pure check plus realpath: a local remote inside the data directory would be a repo whose hooks the agent writes. */
export async function remoteInsideData(remote: string, dataDir: string): Promise<string | undefined> {
  const local = localRemotePath(remote);
  if (!local) return undefined;
  const data = path.resolve(dataDir);
  const realData = await realpath(data).catch(() => data);
  const realRemote = await realpath(local).catch(() => local);
  const inside = (p: string, root: string) => p === root || p.startsWith(`${root}${path.sep}`);
  if (inside(path.resolve(local), data) || inside(realRemote, realData) || inside(realRemote, data)) {
    return `runner.push.remote ${local} is inside the data directory, where the agent could write its hooks: name a repository outside ${data}`;
  }
  return undefined;
}

/** Pure: the local path a remote names (an absolute path or file:// URL), else undefined. */
export function localRemotePath(remote: string): string | undefined {
  if (path.isAbsolute(remote)) return path.resolve(remote);
  if (/^file:\/\//i.test(remote)) {
    try {
      return path.resolve(fileURLToPath(remote));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** "push is off" is news once a process (a watch runs many ticks): after that, debug only. */
const pushOff = { said: false };

function logOutcome(options: PushOptions, outcome: PushOutcome): void {
  const { logger } = options;
  const remote = options.config?.remote;
  switch (outcome.status) {
    case 'off':
      if (pushOff.said) {
        logger.debug('push is off');
        return;
      }
      pushOff.said = true;
      logger.info('push is off: set runner.push.remote in the operator configuration to push the agent\'s commits after each tick');
      return;
    case 'nothing':
      logger.info({ branch: outcome.branch, reason: outcome.reason }, 'nothing to push');
      return;
    case 'pushed':
    case 'up-to-date':
      logger.info({ remote, branch: outcome.branch, commit: outcome.commit, status: outcome.status }, outcome.status === 'pushed' ? 'git push done' : 'git push: the remote is up to date');
      return;
    case 'rejected':
      logger.warn(
        { remote, branch: outcome.branch, reason: outcome.reason },
        'git push rejected: the remote has commits the agent\'s branch lacks; not forced (reconcile by hand, or set runner.push.force)',
      );
      return;
    case 'failed':
      logger.warn({ remote, step: outcome.step, err: outcome.reason }, 'git push failed (best effort)');
  }
}
