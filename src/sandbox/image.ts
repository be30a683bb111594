import path from 'node:path';
import type Dockerode from 'dockerode';
import type { Instance } from '../config/instance.js';
import { KernelError, describeError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { type Engine, statusCode } from './engine.js';
import { type EngineEvent, eventLine, readEngineEvents } from './progress.js';
import { type BuildContext, buildContext, contextHash, packContext, readContainerfile } from './build-context.js';

export { type BuildContext, DEFAULT_CONTAINERFILE, buildContext, contextHash, readContainerfile } from './build-context.js';

/** Labels on everything agent-kernel creates; prune and safety checks go by these. */
export const LABEL = {
  instance: 'agent-kernel.instance',
  hash: 'agent-kernel.hash',
  imageHash: 'agent-kernel.image-hash',
  configHash: 'agent-kernel.config-hash',
  dataDir: 'agent-kernel.data-dir',
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
    if (image === 'scratch' || image.includes('$') || stages.has(image.toLowerCase()) || bases.includes(image)) continue;
    bases.push(image);
  }
  return bases.filter((b) => !stages.has(b.toLowerCase()));
}

export async function imageExists(engine: Engine, name: string): Promise<boolean> {
  return (await inspectImage(engine, name)) !== undefined;
}

/** An image's inspect data; undefined when there is none. */
async function inspectImage(engine: Engine, name: string): Promise<Dockerode.ImageInspectInfo | undefined> {
  try {
    return await engine.docker.getImage(name).inspect();
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

function baseMissing(image: string, why: string): KernelError {
  return new KernelError(
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

const PULL_FAILURE = /pull access denied|repository does not exist|manifest unknown|no such host|dial tcp|failed to resolve|not found: manifest|i\/o timeout/i;

/** A build step line: Docker says "Step 3/7 : RUN ...", Podman "STEP 3/7: RUN ...". */
export const BUILD_STEP = /^step \d+\/\d+ ?: /i;

/** Pure: `docker.io/library/debian:x` and `localhost/a:b`, as Podman lists them, → `debian:x`, `a:b`. */
export function shortReference(reference: string): string {
  return reference.replace(/^(docker\.io\/library\/|docker\.io\/|localhost\/)/, '');
}

/** The build hit a layer that another process deleted meanwhile (a race between build cache and image removal). */
const CACHE_LAYER_VANISHED = /failed to get digest|no such image|layer does not exist|unknown parent image|error getting parent/i;

export interface BuildAttempt {
  failed: boolean;
  message: string;
  step: string;
  tail: string[];
}

export async function runBuild(engine: Engine, context: BuildContext, tag: string, labels: Record<string, string>, options: EnsureImageOptions): Promise<BuildAttempt> {
  const { logger, onProgress } = options;
  const tail: string[] = [];
  let step = '';
  const stream = await engine.docker
    .buildImage(
      // A tar the host packed itself: the engine never resolves a path in the agent's folder.
      packContext(context),
      { t: tag, dockerfile: context.containerfile, labels, rm: true, forcerm: true, nocache: options.force === true },
    )
    .catch((error: unknown) => {
      throw new KernelError('IMAGE_BUILD_FAILED', `Building ${tag} failed to start: ${describeError(error)}`, { cause: error });
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
      throw new KernelError('IMAGE_BUILD_FAILED', `Building ${tag}: the connection to the engine failed: ${describeError(error)}`, { cause: error });
    })
    .finally(() => clearTimeout(timer));
  const failed = errors[0];
  return { failed: failed !== undefined, message: failed ? (failed.errorDetail?.message ?? failed.error ?? 'unknown error') : '', step, tail };
}

/**
 * The instance's image, built when its build context changed (or when forced). Build output
 * goes to the logger and, line by line, to onProgress. Failures: IMAGE_BUILD_FAILED with the
 * failing step and the tail of its output; BASE_IMAGE_MISSING when FROM cannot be had.
 */
export async function ensureImage(engine: Engine, instance: Instance, options: EnsureImageOptions): Promise<ImageRef> {
  const { logger, onProgress } = options;
  const { tag, hash, context } = await currentImageRef(instance);
  // One round trip at every start-up: the image, if any, with its labels.
  const existing = options.force ? undefined : await inspectImage(engine, tag);
  if (existing && (existing.Config?.Labels ?? {})[LABEL.hash] === hash) return { tag, hash };

  const containerfileText = await readContainerfile(context);
  for (const base of baseImages(containerfileText)) await ensureBaseImage(engine, base, logger, onProgress);

  const source = context.builtIn ? 'the built-in Containerfile' : path.join(context.dir, context.containerfile);
  onProgress?.(`building ${tag} from ${source}`);
  logger.info({ tag, source }, 'building image');

  const buildOptions = { ...options, timeoutMs: options.timeoutMs ?? instance.config.container.build_timeout };
  let attempt = await runBuild(engine, context, tag, { [LABEL.instance]: instance.name, [LABEL.hash]: hash }, buildOptions);
  if (attempt.failed && CACHE_LAYER_VANISHED.test(attempt.message)) {
    // Another process removed an image whose layer this build was reusing: the next try picks other layers.
    logger.warn({ tag, error: attempt.message }, 'a cached layer vanished during the build; building again');
    onProgress?.('a cached layer was removed during the build; building again');
    attempt = await runBuild(engine, context, tag, { [LABEL.instance]: instance.name, [LABEL.hash]: hash }, buildOptions);
  }
  const { tail, step } = attempt;
  if (attempt.failed) {
    const message = attempt.message;
    const from = /^step \d+\/\d+ ?: FROM\s+(\S+)/i.exec(step);
    if (from && PULL_FAILURE.test(message)) {
      throw baseMissing(from[1] ?? '?', message);
    }
    throw new KernelError(
      'IMAGE_BUILD_FAILED',
      [`Building ${tag} from ${source} failed${step ? ` at ${step}` : ''}:`, ...tail.map((l) => `  ${l}`), `Fix the Containerfile and run: agent-kernel container rebuild ${instance.name}`].join('\n'),
      { details: { tag, step, error: message } },
    );
  }
  if (!(await imageExists(engine, tag))) {
    throw new KernelError('IMAGE_BUILD_FAILED', `Building ${tag} ended without an image. Last output:\n${tail.join('\n')}`);
  }
  logger.info({ tag }, 'image built');
  return { tag, hash };
}
