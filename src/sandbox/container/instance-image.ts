import path from 'node:path';
import type { Instance } from '../../config/instance.js';
import { KernelError, describeError } from '../../errors.js';
import { buildNetwork } from '../egress/proxy.js';
import type { Engine } from '../engine/engine.js';
import { remoteAddSources } from './containerfile-sources.js';
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
  imageExists,
  inspectImage,
  readContainerfile,
  runBuild,
} from '../engine/image.js';

/** What a failed build's RUN steps could reach, for its error. */
const NETWORK_OF_BUILDS: Record<string, string> = {
  none: 'none: no network',
  allowlist: 'allowlist: container.allow, through the proxy',
};

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
  const source = context.builtIn ? 'the built-in Containerfile' : path.join(context.dir, context.containerfile);
  const remote = remoteAddSources(containerfileText);
  if (remote.length > 0) {
    throw new KernelError(
      'IMAGE_BUILD_FAILED',
      `${source}: ADD ${remote.map((r) => JSON.stringify(r)).join(', ')}: the engine would fetch that itself, from the host's network (its loopback, a cloud's ` +
        `metadata address), outside what container.network allows, so it is never built. Fetch it in a RUN step (curl, wget: it gets the network ` +
        `container.network allows), or put the file in ${context.dir} and ADD it from there. Then run: agent-kernel container rebuild ${instance.name}`,
      { details: { sources: remote } },
    );
  }
  for (const base of baseImages(containerfileText)) await ensureBaseImage(engine, base, logger, onProgress);

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
    throw new KernelError(
      'IMAGE_BUILD_FAILED',
      [
        `Building ${tag} from ${source} failed${step ? ` at ${step}` : ''}:`,
        ...tail.map((l) => `  ${l}`),
        `Its RUN steps reach only what container.network allows (${NETWORK_OF_BUILDS[instance.config.container.network] ?? 'the engine\'s bridge'}).`,
        `Fix the Containerfile and run: agent-kernel container rebuild ${instance.name}`,
      ].join('\n'),
      { details: { tag, step, error: message } },
    );
  }
  if (!(await imageExists(engine, tag))) {
    throw new KernelError('IMAGE_BUILD_FAILED', `Building ${tag} ended without an image. Last output:\n${tail.join('\n')}`);
  }
  logger.info({ tag }, 'image built');
  return { tag, hash };
}
