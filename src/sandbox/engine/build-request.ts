import { CodedError, describeError } from '../../errors.js';
import type { Engine } from './engine.js';

/** What a build is asked for, in Docker's terms; `networkmode` is `none`, `container:<name>`, or absent (the engine's bridge). */
export interface BuildRequest {
  tag: string;
  dockerfile: string;
  labels: Record<string, string>;
  nocache: boolean;
  networkmode?: string | undefined;
  buildargs?: Record<string, string> | undefined;
}

/**
 * Podman's network for a build's RUN steps, as its own build API takes it (`nsoptions`, `networkmode`:
 * 1 none, 2 enabled). Podman 4.3's Docker-compatible `/build` ignores `networkmode` and runs every RUN
 * step in the host's network namespace, `none` included: the agent's Containerfile would reach all the
 * host reaches. Its `/libpod/build` joins a namespace by path, so `container:<name>` becomes that
 * container's `/proc/<pid>/ns/net`, as the engine sees it (on the engine's host, like the container).
 * Without a network asked for, the steps get a namespace of their own on the engine's bridge, as with Docker.
 */
export async function podmanBuildNetwork(engine: Engine, networkmode: string | undefined): Promise<{ nsoptions: string; networkmode: number }> {
  const own = (path: string, mode: number): { nsoptions: string; networkmode: number } => ({
    nsoptions: JSON.stringify([{ Name: 'network', Host: false, Path: path }]),
    networkmode: mode,
  });
  if (networkmode === 'none') return own('', 1);
  if (networkmode === undefined) return own('', 2);
  const joined = /^container:(.+)$/.exec(networkmode)?.[1];
  if (joined === undefined) throw new CodedError('INTERNAL', `unknown build network ${networkmode}`);
  const info = await engine.docker
    .getContainer(joined)
    .inspect()
    .catch((error: unknown) => {
      throw new CodedError('IMAGE_BUILD_FAILED', `The build's network ${joined} cannot be inspected: ${describeError(error)}`, { cause: error });
    });
  const pid = info.State.Pid;
  if (!info.State.Running || !Number.isInteger(pid) || pid <= 0) {
    throw new CodedError('IMAGE_BUILD_FAILED', `The build's network ${joined} is not running (its log: docker logs ${joined}).`);
  }
  return own(`/proc/${pid}/ns/net`, 2);
}

/**
 * Start an image build from a tar the host packed: Docker's `/build`, Podman's `/libpod/build` (the
 * only one of its two that honours the network). Both stream the same `{stream}` / `{error}` events.
 */
export async function startBuild(engine: Engine, tar: NodeJS.ReadableStream, request: BuildRequest): Promise<NodeJS.ReadableStream> {
  const common = { t: request.tag, dockerfile: request.dockerfile, labels: request.labels, rm: true, forcerm: true, nocache: request.nocache };
  if (engine.name === 'docker') {
    return engine.docker.buildImage(tar, {
      ...common,
      ...(request.networkmode ? { networkmode: request.networkmode } : {}),
      ...(request.buildargs ? { buildargs: request.buildargs } : {}),
    });
  }
  const network = await podmanBuildNetwork(engine, request.networkmode);
  // Its API's defaults differ from its CLI's: without `layers` and the OCI format (4.3 finds no cached
  // step for its API's default, Docker's format) every build runs every step again.
  const options = {
    ...common,
    ...network,
    layers: true,
    outputformat: 'application/vnd.oci.image.manifest.v1+json',
    pullpolicy: 'missing',
    ...(request.buildargs ? { buildargs: request.buildargs } : {}),
  };
  return new Promise((resolve, reject) => {
    engine.docker.modem.dial(
      {
        path: '/v4.0.0/libpod/build?',
        method: 'POST',
        file: tar,
        options,
        isStream: true,
        headers: { 'Content-Type': 'application/x-tar' },
        statusCodes: { 200: true, 400: 'bad parameter', 500: 'server error' },
      },
      (error: unknown, stream: unknown) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(stream as NodeJS.ReadableStream)),
    );
  });
}
