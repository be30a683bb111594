import path from 'node:path';
import type { Instance } from '../../config/instance.js';
import { CodedError, describeError } from '../../errors.js';
import { buildNetwork } from '../egress/proxy.js';
import type { Engine } from '../engine/engine.js';
import { DEFAULT_BASE_IMAGE } from '../engine/bootstrap.js';
import { onBuildTriggers } from '../engine/image-triggers.js';
import { withBuildLock } from './build-lock.js';
import { type Refusal, containerfileUses } from './containerfile-sources.js';
import {
  type BuildAttempt,
  CACHE_LAYER_VANISHED,
  type EnsureImageOptions,
  type ImageRef,
  LABEL,
  PULL_FAILURE,
  baseImages,
  baseMissing,
  currentImageRef,
  ensureBaseImage,
  inspectImage,
  readContainerfile,
  runBuild,
  shortReference,
} from '../engine/image.js';

/** What a failed build's RUN steps could reach, for its error. */
const NETWORK_OF_BUILDS: Record<string, string> = {
  none: 'none: no network',
  allowlist: 'allowlist: container.allow, through the proxy',
};

/**
 * The instance's image, built when its build context changed (or when forced). Build output
 * goes to the logger and, line by line, to onProgress. Failures: IMAGE_BUILD_FAILED with the
 * failing step and the tail of its output; BASE_IMAGE_MISSING when FROM cannot be had (the agent's
 * Containerfile: when an image it names is not on the engine; it is never pulled).
 */
export async function ensureImage(engine: Engine, instance: Instance, options: EnsureImageOptions): Promise<ImageRef> {
  const { logger, onProgress } = options;
  const { tag, hash, context } = await currentImageRef(instance);
  // One round trip at every start-up: the image, if any, with its labels.
  const existing = options.force ? undefined : await inspectImage(engine, tag);
  if (existing && (existing.Config?.Labels ?? {})[LABEL.hash] === hash) {
    refuseHostLabels(instance, tag, existing.Config?.Labels ?? {});
    return { tag, hash };
  }
  return withBuildLock(instance, instance.config.container.build_timeout + 60_000, { logger, onProgress }, async () => {
    // Another process may have built it while this one waited for the lock.
    const now = options.force ? undefined : await inspectImage(engine, tag);
    if (now && (now.Config?.Labels ?? {})[LABEL.hash] === hash) {
      refuseHostLabels(instance, tag, now.Config?.Labels ?? {});
      return { tag, hash };
    }
    return buildImage(engine, instance, { tag, hash, context }, options);
  });
}

/** Build the instance's image (its build lock held): the checks of its Containerfile, then the build. */
async function buildImage(engine: Engine, instance: Instance, ref: ImageRef & { context: Awaited<ReturnType<typeof currentImageRef>>['context'] }, options: EnsureImageOptions): Promise<ImageRef> {
  const { logger, onProgress } = options;
  const { tag, hash, context } = ref;
  const containerfileText = await readContainerfile(context);
  const source = context.builtIn ? 'the built-in Containerfile' : path.join(context.dir, context.containerfile);
  if (context.builtIn) {
    // The project's own Containerfile: its base may be pulled (or bootstrapped: BASE_IMAGE_MISSING says how).
    for (const base of baseImages(containerfileText)) await ensureBaseImage(engine, base, logger, onProgress);
  } else {
    await refuseImagesToFetch(engine, instance, source, containerfileText);
  }

  onProgress?.(`building ${tag} from ${source}`);
  logger.info({ tag, source }, 'building image');

  // The RUN steps are the agent's code: they get no more network than its terminals.
  const network = await buildNetwork(engine, instance, { logger, onProgress });
  // The text checked above is what the engine gets: the file is not read again.
  const buildOptions = { ...options, timeoutMs: options.timeoutMs ?? instance.config.container.build_timeout, network, containerfile: containerfileText };
  let attempt: BuildAttempt;
  try {
    attempt = await runBuild(engine, context, tag, { [LABEL.instance]: instance.name, [LABEL.hash]: hash }, buildOptions);
    if (attempt.failed && CACHE_LAYER_VANISHED.test(attempt.message)) {
      // Another process removed an image whose layer this build was reusing: the next try picks other layers.
      logger.warn({ tag, error: attempt.message }, 'a cached layer vanished during the build; building again');
      onProgress?.('a cached layer was removed during the build; building again');
      attempt = await runBuild(engine, context, tag, { [LABEL.instance]: instance.name, [LABEL.hash]: hash }, buildOptions);
    }
  } finally {
    await network.release().catch((error: unknown) => logger.warn({ err: describeError(error) }, 'removing the build\'s egress link failed'));
  }
  const { tail, step } = attempt;
  if (attempt.failed) {
    const message = attempt.message;
    const from = /^step \d+\/\d+ ?: FROM\s+(\S+)/i.exec(step);
    if (from && PULL_FAILURE.test(message)) {
      throw baseMissing(from[1] ?? '?', message);
    }
    throw new CodedError(
      'IMAGE_BUILD_FAILED',
      [
        `Building ${tag} from ${source} failed${step ? ` at ${step}` : ''}:`,
        ...tail.map((l) => `  ${l}`),
        `Its RUN steps reach only what container.network allows (${NETWORK_OF_BUILDS[instance.config.container.network] ?? 'the engine\'s bridge'}).`,
        `Fix the Containerfile and run: agent-kernel container rebuild ${instance.name}`,
      ].join('\n'),
      { details: { tag, step, error: message, output: tail } },
    );
  }
  const built = await inspectImage(engine, tag);
  if (built === undefined) {
    throw new CodedError('IMAGE_BUILD_FAILED', `Building ${tag} ended without an image. Last output:\n${tail.join('\n')}`);
  }
  try {
    refuseHostLabels(instance, tag, built.Config?.Labels ?? {});
  } catch (error) {
    // This build made the tag: it goes, so no container is ever created from it.
    await engine.docker.getImage(tag).remove().catch((removal: unknown) => logger.warn({ tag, err: describeError(removal) }, 'removing a refused image failed'));
    throw error;
  }
  logger.info({ tag }, 'image built');
  return { tag, hash };
}

/** The labels the host sets on the agent's image; its containers get the image's labels under their own. */
const OWN_IMAGE_LABELS: ReadonlySet<string> = new Set([LABEL.instance, LABEL.hash]);

/**
 * One of the host's labels (LABEL) that the host did not set on the image (a LABEL line, or one a
 * base image carried) would be merged into the container's labels, where prune and the safety
 * checks read them (an `agent-kernel.egress-role` makes prune pass a container by): such an image
 * is never used. (Other `agent-kernel.*` labels, such as a bootstrapped base's, are read by nothing.)
 */
function refuseHostLabels(instance: Instance, tag: string, labels: Record<string, string>): void {
  const hostReads: ReadonlySet<string> = new Set(Object.values(LABEL));
  const foreign = Object.keys(labels).filter((key) => hostReads.has(key) && !OWN_IMAGE_LABELS.has(key));
  if (foreign.length === 0) return;
  throw new CodedError(
    'IMAGE_BUILD_FAILED',
    `${tag} carries ${foreign.join(', ')}: that label is the host's own, and only the host sets it, so the image is not used. ` +
      `Remove that LABEL from ${instance.paths.containerfile} (or start from a base image without it). Then run: agent-kernel container rebuild ${instance.name}`,
    { details: { tag, labels: foreign } },
  );
}

/** The images the agent's Containerfile may start from: the built-in Containerfile's base, and the operator's container.base_images. */
export function allowedBaseImages(instance: Instance): string[] {
  return [DEFAULT_BASE_IMAGE, ...instance.config.container.base_images];
}

/** `docker.io/library/debian:x` and `debian:x` are one image. */
const sameImage = (a: string, b: string) => shortReference(a) === shortReference(b);

function refusedError(source: string, refused: Refusal[], rebuild: string): CodedError {
  return new CodedError(
    'IMAGE_BUILD_FAILED',
    [
      `${source} is not built: the engine would fetch what it names itself, from the host's network (its loopback, a cloud's metadata address), outside what container.network allows.`,
      ...refused.map((r) => `  line ${r.line}: ${r.text}: ${r.why}`),
      `Fetch files in a RUN step (curl, wget: it gets the network container.network allows), or put them in the build context and ADD them by a plain path. ${rebuild}`,
    ].join('\n'),
    { details: { refused } },
  );
}

/**
 * The agent's Containerfile is read with the engine's grammar and allowed only what cannot make
 * the engine fetch (containerfile-sources.ts); the images it names must be the operator's
 * (allowedBaseImages), already on the engine (never pulled), and their ONBUILD triggers, which
 * run in this build, pass the same rules (and so do the images those name).
 */
async function refuseImagesToFetch(engine: Engine, instance: Instance, source: string, containerfileText: string): Promise<void> {
  const rebuild = `Then run: agent-kernel container rebuild ${instance.name}`;
  const uses = containerfileUses(containerfileText);
  if (uses.refused.length > 0) throw refusedError(source, uses.refused, rebuild);
  const allowed = allowedBaseImages(instance);
  const queue = [...uses.images];
  const seen = new Set<string>();
  for (let named = queue.shift(); named !== undefined; named = queue.shift()) {
    if (seen.has(named.reference)) continue;
    seen.add(named.reference);
    const what = `${named.instruction} ${named.reference}`;
    if (!allowed.some((image) => sameImage(image, named.reference))) {
      throw new CodedError(
        'IMAGE_BUILD_FAILED',
        `${source}: ${what}: that image is not one the agent's Containerfile may use. It may start from ${allowed.join(', ')} (the built-in base and ` +
          `container.base_images in ${instance.paths.operatorConfig}) or an earlier stage of the same Containerfile, never another image on the engine ` +
          `(another instance's among them). An operator can add it to container.base_images. ${rebuild}`,
        { details: { instruction: named.instruction, image: named.reference, allowed } },
      );
    }
    const image = await inspectImage(engine, named.reference);
    if (image === undefined) {
      throw new CodedError(
        'BASE_IMAGE_MISSING',
        `${source}: ${what}: that image is not on this engine, and it is never pulled for the agent's Containerfile (the engine would fetch it itself, ` +
          `from the host's network and whatever registry the name says). An operator can add one: agent-kernel image bootstrap ${named.reference} (Debian, offline), ` +
          `or docker load -i <file>. ${rebuild}`,
        { details: { instruction: named.instruction, image: named.reference } },
      );
    }
    for (const trigger of await onBuildTriggers(engine, named.reference, image)) {
      const triggerUses = containerfileUses(trigger);
      if (triggerUses.refused.length > 0) {
        throw refusedError(`${source}: ${what}: that image's ONBUILD step ${JSON.stringify(trigger.slice(0, 200))}`, triggerUses.refused, `Start from another image, or an earlier stage. ${rebuild}`);
      }
      queue.push(...triggerUses.images.map((inner) => ({ ...inner, instruction: `${what}'s ONBUILD ${inner.instruction}` })));
    }
  }
}
