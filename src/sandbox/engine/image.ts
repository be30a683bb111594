import type Dockerode from 'dockerode';
import type { Instance } from '../../config/instance.js';
import { CodedError, describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { type Engine, statusCode } from './engine.js';
import { startBuild } from './build-request.js';
import { type EngineEvent, eventLine, readEngineEvents } from './progress.js';
import { type BuildContext, buildContext, contextHash, packContext } from './build-context.js';

export { type BuildContext, DEFAULT_CONTAINERFILE, buildContext, contextHash, readContainerfile } from './build-context.js';

/** Labels on everything agent-kernel creates; prune and safety checks go by these. */
export const LABEL = {
  instance: 'agent-kernel.instance',
  hash: 'agent-kernel.hash',
  imageHash: 'agent-kernel.image-hash',
  configHash: 'agent-kernel.config-hash',
  dataDir: 'agent-kernel.data-dir',
  /** The state directory whose processes own the container (container/container-owner.ts). */
  stateDir: 'agent-kernel.state-dir',
  /** What an egress container is: `proxy` or `link`; the instance's own container has none. */
  egressRole: 'agent-kernel.egress-role',
  /** On a link: the agent container (id and start time) whose network namespace it serves. */
  netnsOf: 'agent-kernel.netns-of',
  /** On the shared egress image. */
  egressImage: 'agent-kernel.egress-image',
} as const;

export type ProgressCallback = (line: string) => void;

export interface ImageRef {
  tag: string;
  /** Full sha256 (hex) of the build context. */
  hash: string;
}

/** Docker repository names are lower case `[a-z0-9._-]`. */
export function imageRepository(instanceName: string): string {
  const safe = instanceName.toLowerCase().replace(/[^a-z0-9._-]/g, '-').replace(/^[._-]+/, '');
  return `agent-kernel/${safe || 'instance'}`;
}

export function imageTag(instanceName: string, hash: string): string {
  return `${imageRepository(instanceName)}:${hash.slice(0, 12)}`;
}

/** The tag and hash the instance's image has (or would have) now, without building. */
export async function currentImageRef(instance: Instance): Promise<ImageRef & { context: BuildContext }> {
  const context = await buildContext(instance);
  const hash = await contextHash(context);
  return { tag: imageTag(instance.name, hash), hash, context };
}

/** Base images named by FROM lines, minus `scratch`, earlier stages and ones built from ARGs. */
export function baseImages(containerfile: string): string[] {
  const stages = new Set<string>();
  const bases: string[] = [];
  const text = containerfile.replace(/\\\r?\n/g, ' ');
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*FROM\s+(.*)$/i.exec(line);
    if (!match) continue;
    const words = (match[1] ?? '').trim().split(/\s+/).filter((w) => !w.startsWith('--'));
    const image = words[0];
    if (!image) continue;
    if (words[1]?.toLowerCase() === 'as' && words[2]) stages.add(words[2].toLowerCase());
    if (image === 'scratch' || !/^[A-Za-z0-9][A-Za-z0-9._/:@-]*$/.test(image) || stages.has(image.toLowerCase()) || bases.includes(image)) continue;
    bases.push(image);
  }
  return bases.filter((b) => !stages.has(b.toLowerCase()));
}

export async function imageExists(engine: Engine, name: string): Promise<boolean> {
  return (await inspectImage(engine, name)) !== undefined;
}

/** An image's inspect data; undefined when there is none. */
export async function inspectImage(engine: Engine, name: string): Promise<Dockerode.ImageInspectInfo | undefined> {
  try {
    return await engine.docker.getImage(name).inspect();
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

export function baseMissing(image: string, why: string): CodedError {
  return new CodedError(
    'BASE_IMAGE_MISSING',
    `The base image ${image} is not on this engine and cannot be pulled (${why}). Build it offline from Debian packages: agent-kernel image bootstrap ${image}`,
    { details: { image } },
  );
}

export async function ensureBaseImage(engine: Engine, image: string, logger: Logger, onProgress?: ProgressCallback): Promise<void> {
  if (await imageExists(engine, image)) return;
  onProgress?.(`pulling ${image}`);
  try {
    const stream = await engine.docker.pull(image);
    const errors = await readEngineEvents(stream, (event) => {
      const line = eventLine(event);
      if (line) logger.debug({ image }, line);
    });
    const failed = errors[0];
    if (failed) throw new Error(failed.error);
  } catch (error) {
    throw baseMissing(image, describeError(error).split('\n')[0] ?? 'pull failed');
  }
}

export interface EnsureImageOptions {
  logger: Logger;
  onProgress?: ProgressCallback | undefined;
  /** Build even when an image with this hash exists, without the build cache. */
  force?: boolean;
  /** Stop the build after this long (ensureImage: container.build_timeout); none when absent. */
  timeoutMs?: number;
}

export const PULL_FAILURE = /pull access denied|repository does not exist|manifest unknown|no such host|dial tcp|failed to resolve|not found: manifest|i\/o timeout/i;

/** A build step line: Docker says "Step 3/7 : RUN ...", Podman "STEP 3/7: RUN ...". */
export const BUILD_STEP = /^step \d+\/\d+ ?: /i;

/** Pure: `docker.io/library/debian:x` and `localhost/a:b`, as Podman lists them, → `debian:x`, `a:b`. */
export function shortReference(reference: string): string {
  return reference.replace(/^(docker\.io\/library\/|docker\.io\/|localhost\/)/, '');
}

/** The build hit a layer that another process deleted meanwhile (a race between build cache and image removal). */
export const CACHE_LAYER_VANISHED = /failed to get digest|no such image|layer does not exist|unknown parent image|error getting parent/i;

export interface BuildAttempt {
  failed: boolean;
  message: string;
  step: string;
  tail: string[];
}

/** Where the build's RUN steps run: Docker's `networkmode` and `buildargs` (egress/proxy.ts buildNetwork); the engine's default without. */
export interface BuildNetworkOptions {
  networkmode?: string;
  buildargs?: Record<string, string>;
}

export async function runBuild(
  engine: Engine,
  context: BuildContext,
  tag: string,
  labels: Record<string, string>,
  options: EnsureImageOptions & { network?: BuildNetworkOptions; containerfile?: string },
): Promise<BuildAttempt> {
  const { logger, onProgress } = options;
  const tail: string[] = [];
  let step = '';
  const stream = await startBuild(
    engine,
    // A tar the host packed itself: the engine never resolves a path in the agent's folder.
    packContext(context, options.containerfile),
    {
      tag,
      dockerfile: context.containerfile,
      labels,
      nocache: options.force === true,
      networkmode: options.network?.networkmode,
      buildargs: options.network?.buildargs,
    },
  )
    .catch((error: unknown) => {
      throw new CodedError('IMAGE_BUILD_FAILED', `Building ${tag} failed to start: ${describeError(error)}`, { cause: error });
    });
  // Closing the connection cancels the build in the engine, and fails the read below.
  const limit = options.timeoutMs;
  let timedOut = false;
  const timer =
    limit === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          const line = `the build took longer than ${Math.round(limit / 1000)} s and was stopped: make the step finish, or raise container.build_timeout in the operator's configuration`;
          tail.push(line);
          onProgress?.(line);
          (stream as NodeJS.ReadableStream & { destroy(error: Error): void }).destroy(new Error('build timeout'));
        }, limit);
  const errors = await readEngineEvents(stream, (event: EngineEvent) => {
    const line = eventLine(event);
    if (line === undefined) return;
    for (const part of line.split('\n')) {
      if (BUILD_STEP.test(part)) step = part;
      tail.push(part);
      if (tail.length > 30) tail.shift();
      logger.debug({ tag }, part);
      onProgress?.(part);
    }
  })
    .catch((error: unknown): EngineEvent[] => {
      if (timedOut) return [{ error: tail.at(-1) }];
      throw new CodedError('IMAGE_BUILD_FAILED', `Building ${tag}: the connection to the engine failed: ${describeError(error)}`, { cause: error });
    })
    .finally(() => clearTimeout(timer));
  const failed = errors[0];
  return { failed: failed !== undefined, message: failed ? (failed.errorDetail?.message ?? failed.error ?? 'unknown error') : '', step, tail };
}

