import { createHash } from 'node:crypto';
import type Dockerode from 'dockerode';
import tar from 'tar-stream';
import { CodedError, describeError } from '../../errors.js';
import type { Engine } from './engine.js';

/** The image's config blob is a few KB; anything larger in its export is a layer, skipped unread. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
/** An export streams every layer: a large image on a loaded engine takes a while. */
const EXPORT_TIMEOUT_MS = 10 * 60_000;

/**
 * The ONBUILD triggers of an image, as the engine's builder runs them in a build FROM it.
 * Docker's inspect gives the stored config's `OnBuild`. Podman 4.3's inspect (both APIs) leaves it
 * out, yet its builder (buildah) runs the triggers it reads from the stored config: there they are read
 * from the config blob itself, out of the image's export, and taken only when the blob's digest is the
 * image's id (the bytes the engine stores, converted as its builder converts them).
 */
export async function onBuildTriggers(engine: Engine, reference: string, image: Dockerode.ImageInspectInfo): Promise<string[]> {
  if (engine.name !== 'podman') return ((image.Config?.OnBuild ?? []) as unknown[]).map(String);
  const config = await storedConfig(engine, reference, image.Id);
  const onBuild = (config as { config?: { OnBuild?: unknown } }).config?.OnBuild;
  return Array.isArray(onBuild) ? onBuild.map(String) : [];
}

/** The config blob `<id>.json` out of the image's export (docker-archive), checked against the id. */
async function storedConfig(engine: Engine, reference: string, id: string): Promise<unknown> {
  const digest = /^(?:sha256:)?([0-9a-f]{64})$/.exec(id)?.[1];
  const unreadable = (why: string, cause?: unknown) =>
    new CodedError(
      'IMAGE_BUILD_FAILED',
      `The ONBUILD steps of ${reference} cannot be read from the engine (${why}), so the agent's Containerfile is not built FROM it. Try again; if it persists, start from another image.`,
      { details: { image: reference }, ...(cause === undefined ? {} : { cause }) },
    );
  if (digest === undefined) throw unreadable(`its id ${id} is not a sha256 digest`);
  const wanted = `${digest}.json`;
  const exported = (await engine.docker.getImage(id).get().catch((error: unknown) => {
    throw unreadable(describeError(error), error);
  })) as NodeJS.ReadableStream;
  const found = await new Promise<Buffer | undefined>((resolve, reject) => {
    const extract = tar.extract();
    let blob: Buffer | undefined;
    const timer = setTimeout(() => {
      extract.destroy(new Error(`no answer within ${EXPORT_TIMEOUT_MS / 1000} s`));
    }, EXPORT_TIMEOUT_MS);
    extract.on('entry', (header, stream, next) => {
      if (header.name !== wanted || (header.size ?? 0) > MAX_CONFIG_BYTES) {
        stream.on('end', next);
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        blob = Buffer.concat(chunks);
        next();
      });
    });
    extract.on('finish', () => {
      clearTimeout(timer);
      resolve(blob);
    });
    extract.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    exported.on('error', (error: Error) => extract.destroy(error));
    exported.pipe(extract);
  }).catch((error: unknown) => {
    throw unreadable(describeError(error), error);
  });
  if (found === undefined) throw unreadable(`its export holds no ${wanted}`);
  if (createHash('sha256').update(found).digest('hex') !== digest) throw unreadable(`its config does not match its id ${digest.slice(0, 12)}`);
  try {
    return JSON.parse(found.toString('utf8')) as unknown;
  } catch (error) {
    throw unreadable('its config is not JSON', error);
  }
}
