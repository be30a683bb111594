import path from 'node:path';
import type Dockerode from 'dockerode';
import { describeAllowEntry, parseAllowEntry, type AllowEntry } from '../../config/egress-allow.js';
import type { Instance } from '../../config/instance.js';
import { CodedError, describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { DockerSandbox } from '../docker-sandbox.js';
import { type Engine, createOrFindContainer, forceRemoveContainer, inspectNamed, statusCode } from '../engine/engine.js';
import { CONTAINER_ULIMITS } from '../engine/ulimits.js';
import { type BuildContext, type BuildNetworkOptions, LABEL, type ProgressCallback, baseImages, contextHash, ensureBaseImage, imageExists, readContainerfile, runBuild } from '../engine/image.js';
import { trustedContext } from '../engine/build-context.js';
import { PROXY_URL, proxyEnv, squidConfig } from './squid.js';
import { packageRoot } from '../../util/package-root.js';
import { localDestinations } from './ranges.js';
import { readdir } from 'node:fs/promises';
import { sleep } from '../../util/sleep.js';

/**
 * The `allowlist` policy's topology. The instance's container has no network but loopback
 * (NetworkMode none), so nothing it runs has a route anywhere: a connection that bypasses
 * the proxy fails at once with "Network is unreachable". Two more containers per instance:
 * - the proxy, `agent-kernel-<name>--egress`, on the engine's bridge: squid enforcing
 *   container.allow, listening on 127.0.0.1 and on a unix socket in a private volume;
 * - the link, `agent-kernel-<name>--egress-link`, sharing the instance container's network
 *   namespace: 127.0.0.1:3128 there → that socket. The agent cannot reach into either
 *   (other PID namespace, other mount namespace), so it cannot change the policy.
 * Everything carries LABEL.instance and LABEL.egressRole; the image is shared by all instances.
 */

export const EGRESS_CONTEXT_DIR = path.join(packageRoot(), 'assets', 'egress');

export function proxyContainerName(instanceName: string): string {
  return `agent-kernel-${instanceName}--egress`;
}
export function linkContainerName(instanceName: string): string {
  return `agent-kernel-${instanceName}--egress-link`;
}
/** The link image builds run their steps behind (buildNetwork). */
export function buildLinkContainerName(instanceName: string): string {
  return `agent-kernel-${instanceName}--egress-build`;
}
export function socketVolumeName(instanceName: string): string {
  return `agent-kernel-${instanceName}--egress`;
}

/** Files that tools read even when their environment was reset (sudo, su -, cron). */
const PROXY_FILES_SCRIPT = [
  'set -e',
  `mkdir -p /etc/apt/apt.conf.d /etc/profile.d`,
  `printf 'Acquire::http::Proxy "${PROXY_URL}";\\nAcquire::https::Proxy "${PROXY_URL}";\\n' > /etc/apt/apt.conf.d/90agent-kernel-proxy`,
  `printf 'export HTTP_PROXY=${PROXY_URL} HTTPS_PROXY=${PROXY_URL} http_proxy=${PROXY_URL} https_proxy=${PROXY_URL} NO_PROXY=localhost,127.0.0.1,::1 no_proxy=localhost,127.0.0.1,::1\\n' > /etc/profile.d/agent-kernel-proxy.sh`,
  `[ -e /etc/pip.conf ] || printf '[global]\\nproxy = ${PROXY_URL}\\n' > /etc/pip.conf`,
  `if command -v git >/dev/null; then git config --system http.proxy ${PROXY_URL}; fi`,
  `if command -v npm >/dev/null; then npm config --global set proxy ${PROXY_URL} >/dev/null 2>&1 && npm config --global set https-proxy ${PROXY_URL} >/dev/null 2>&1 || true; fi`,
].join('\n');

export interface EgressOptions {
  logger: Logger;
  onProgress?: ProgressCallback | undefined;
}

/** Pure: the instance's allow entries, parsed (the schema validated them already). */
export function allowEntries(instance: Instance): AllowEntry[] {
  return instance.config.container.allow.map(parseAllowEntry);
}

async function egressContext(): Promise<BuildContext> {
  const files = (await readdir(EGRESS_CONTEXT_DIR)).sort();
  return trustedContext(EGRESS_CONTEXT_DIR, files, 'Containerfile');
}

/** The shared egress image, built (offline from the base image) when its context changed. */
export async function ensureEgressImage(engine: Engine, options: EgressOptions): Promise<string> {
  const context = await egressContext();
  const hash = await contextHash(context);
  const tag = `agent-kernel/egress:${hash.slice(0, 12)}`;
  if (await imageExists(engine, tag)) return tag;
  const text = await readContainerfile(context);
  for (const base of baseImages(text)) await ensureBaseImage(engine, base, options.logger, options.onProgress);
  options.onProgress?.(`building the egress proxy image ${tag}`);
  const attempt = await runBuild(engine, context, tag, { [LABEL.egressImage]: hash }, { logger: options.logger, onProgress: options.onProgress });
  if (attempt.failed || !(await imageExists(engine, tag))) {
    throw new CodedError('IMAGE_BUILD_FAILED', [`Building the egress proxy image ${tag} failed${attempt.step ? ` at ${attempt.step}` : ''}: ${attempt.message}`, ...attempt.tail.map((l) => `  ${l}`)].join('\n'));
  }
  return tag;
}

async function inspectOurs(engine: Engine, name: string, instance: Instance, role: string): Promise<Dockerode.ContainerInspectInfo | undefined> {
  const info = await inspectNamed(engine, name);
  if (!info) return undefined;
  const labels = info.Config.Labels ?? {};
  if (labels[LABEL.instance] !== instance.name || labels[LABEL.egressRole] !== role) {
    throw new CodedError('CONTAINER_FAILED', `A container named ${name} exists but is not ${instance.name}'s egress ${role}; it is left alone. Remove it yourself (docker rm -f ${name}) or use another instance name.`);
  }
  return info;
}

async function removeIfPresent(engine: Engine, id: string): Promise<void> {
  await forceRemoveContainer(engine, id).catch((error: unknown) => {
      if (statusCode(error) !== 404) throw error;
    });
}

/** Bumped when the proxy's create options change, so that running proxies are recreated with them. */
const PROXY_REVISION = '+r2';

const LOCKED_DOWN: Dockerode.HostConfig = {
  CapDrop: ['ALL'],
  SecurityOpt: ['no-new-privileges'],
  Privileged: false,
  PidsLimit: 256,
  Memory: 256 * 1024 ** 2,
  MemorySwap: 256 * 1024 ** 2,
  Init: true,
  IpcMode: 'private',
  RestartPolicy: { Name: 'no' },
  Ulimits: CONTAINER_ULIMITS,
};

/** Create (or keep) and start one egress container; recreated when `wanted` labels differ. */
async function ensureRunning(engine: Engine, instance: Instance, options: Dockerode.ContainerCreateOptions & { name: string }, role: string, keyLabel: string, progress?: ProgressCallback): Promise<void> {
  let info = await inspectOurs(engine, options.name, instance, role);
  if (info && info.Config.Labels?.[keyLabel] !== options.Labels?.[keyLabel]) {
    progress?.(`recreating ${options.name}`);
    await removeIfPresent(engine, info.Id);
    info = undefined;
  }
  if (!info) {
    progress?.(`creating ${options.name}`);
    const { created } = await createOrFindContainer(engine, options);
    // Another process for this instance created it first: use it if it is ours.
    if (!created && (await inspectOurs(engine, options.name, instance, role))?.State.Running) return;
  } else if (info.State.Running) return;
  try {
    await engine.docker.getContainer(options.name).start();
  } catch (error) {
    if (statusCode(error) !== 304) throw new CodedError('CONTAINER_FAILED', `Cannot start ${options.name}: ${describeError(error)}. Its log: docker logs ${options.name}`, { cause: error });
  }
}

function execIn(engine: Engine, container: string): DockerSandbox {
  return new DockerSandbox({ engine, containerName: container, cwd: '/', user: 'root' });
}

/** The proxy's squid.conf: the instance's allowlist, and this engine's networks and host addresses refused. */
async function proxyConfig(engine: Engine, instance: Instance): Promise<string> {
  return squidConfig(allowEntries(instance), await localDestinations(engine));
}

/** Install the allowlist in the running proxy; a no-op when it already has this one. */
export async function applyAllowlist(engine: Engine, instance: Instance): Promise<{ changed: boolean }> {
  const config = await proxyConfig(engine, instance);
  const proxy = execIn(engine, proxyContainerName(instance.name));
  const current = await proxy.run(['cat', '/etc/squid/agent-kernel.conf'], { timeoutMs: 10_000 });
  if (current.exitCode === 0 && current.stdout === config) return { changed: false };
  const result = await proxy.run(['/usr/local/bin/agent-kernel-egress', 'apply'], { input: config, timeoutMs: 30_000 });
  if (result.exitCode !== 0) {
    throw new CodedError('CONTAINER_FAILED', `The egress proxy of ${instance.name} refused the allowlist (exit ${result.exitCode}): ${(result.stderr || result.stdout).trim()}`);
  }
  return { changed: true };
}

/** A running proxy enforcing the instance's allowlist; its image, socket volume and labels, for links to it. */
export interface RunningProxy {
  image: string;
  volume: string;
  labels: Record<string, string>;
}

/** Create (or keep) the instance's proxy, running with its current allowlist. */
export async function ensureProxy(engine: Engine, instance: Instance, options: EgressOptions): Promise<RunningProxy> {
  const image = await ensureEgressImage(engine, options);
  const volume = socketVolumeName(instance.name);
  await engine.docker.createVolume({ Name: volume, Labels: { [LABEL.instance]: instance.name, [LABEL.egressRole]: 'socket' } }).catch((error: unknown) => {
    throw new CodedError('CONTAINER_FAILED', `Cannot create the egress volume ${volume}: ${describeError(error)}`, { cause: error });
  });
  // The revision of the proxy's create options rides on the image label: a proxy made with older ones is recreated.
  const labels = { [LABEL.instance]: instance.name, [LABEL.imageHash]: `${image}${PROXY_REVISION}` };
  await ensureRunning(
    engine,
    instance,
    {
      name: proxyContainerName(instance.name),
      Image: image,
      Cmd: ['/usr/local/bin/agent-kernel-egress', 'proxy'],
      // Starts with this allowlist, so that no reconfigure races squid's start-up.
      Env: [`AGENT_KERNEL_SQUID_CONF=${Buffer.from(await proxyConfig(engine, instance)).toString('base64')}`],
      Labels: { ...labels, [LABEL.egressRole]: 'proxy' },
      HostConfig: {
        ...LOCKED_DOWN,
        // Root sets up and drops to `proxy`: squid needs to change user and own its files.
        CapAdd: ['SETUID', 'SETGID', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL'],
        NetworkMode: 'bridge',
        // IPv6 on in its own namespace (Docker turns it off there without an IPv6 network): squid then judges IPv6
        // answers like IPv4 ones (a refusal, 403), where it would otherwise drop them unjudged and fail the request (502).
        Sysctls: { 'net.ipv6.conf.all.disable_ipv6': '0', 'net.ipv6.conf.lo.disable_ipv6': '0' },
        Mounts: [{ Type: 'volume', Source: volume, Target: '/run/egress' }],
        LogConfig: { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '3' } },
      },
    },
    'proxy',
    LABEL.imageHash,
    options.onProgress,
  );
  await applyAllowlist(engine, instance);
  return { image, volume, labels };
}

/**
 * A link: 127.0.0.1:3128 in a network namespace (NetworkMode `container:…`, or `none` for its
 * own) → the proxy's socket, mounted read-only. Nothing else in that namespace has a route.
 */
export function linkOptions(proxy: RunningProxy, name: string, networkMode: string, labels: Record<string, string>, usernsMode?: string): Dockerode.ContainerCreateOptions & { name: string } {
  return {
    name,
    Image: proxy.image,
    Cmd: ['/usr/local/bin/agent-kernel-egress', 'link'],
    User: 'nobody',
    Labels: { ...proxy.labels, ...labels },
    HostConfig: {
      ...LOCKED_DOWN,
      Memory: 64 * 1024 ** 2,
      MemorySwap: 64 * 1024 ** 2,
      NetworkMode: networkMode,
      Mounts: [{ Type: 'volume', Source: proxy.volume, Target: '/run/egress', ReadOnly: true }],
      // A namespace is joined from the user namespace that owns it: the agent's (container.boundary "none" turns remapping off there).
      ...(usernsMode ? { UsernsMode: usernsMode } : {}),
    },
  };
}

/**
 * Bring the instance's egress up to date with its config: proxy, link and allowlist for
 * `allowlist` (the instance container must be running), nothing at all otherwise.
 */
export async function ensureEgress(engine: Engine, instance: Instance, agent: Dockerode.ContainerInspectInfo, options: EgressOptions): Promise<void> {
  if (instance.config.container.network !== 'allowlist') {
    await removeEgress(engine, instance);
    return;
  }
  const proxy = await ensureProxy(engine, instance, options);
  // The link lives in the instance container's network namespace: a restart of that container makes a new one.
  const netnsOf = `${agent.Id}@${agent.State.StartedAt}`;
  await ensureRunning(
    engine,
    instance,
    linkOptions(proxy, linkContainerName(instance.name), `container:${agent.Id}`, { [LABEL.egressRole]: 'link', [LABEL.netnsOf]: `${netnsOf}/${proxy.image}` }, agent.HostConfig.UsernsMode || undefined),
    'link',
    LABEL.netnsOf,
    options.onProgress,
  );
  const files = await execIn(engine, agent.Id).run(['sh', '-c', PROXY_FILES_SCRIPT], { timeoutMs: 30_000 });
  if (files.exitCode !== 0) options.logger.warn({ stderr: files.stderr }, 'writing the proxy settings into the container failed');
}

/** Where an image build runs its steps (Docker's `networkmode` and `buildargs`); release() once it is done. */
export interface BuildNetwork extends BuildNetworkOptions {
  release(): Promise<void>;
}

/**
 * The network an image build of this instance gets: no more than its terminals. The agent
 * writes the Containerfile, so its RUN steps are the agent's code. `open`: the engine's
 * bridge; `none`: nothing; `allowlist`: a namespace of their own whose only way out is a
 * link to the instance's proxy (127.0.0.1:3128, in the proxy variables every tool reads).
 */
export async function buildNetwork(engine: Engine, instance: Instance, options: EgressOptions): Promise<BuildNetwork> {
  const policy = instance.config.container.network;
  const nothing = async (): Promise<void> => undefined;
  if (policy === 'none') return { networkmode: 'none', release: nothing };
  if (policy !== 'allowlist') return { release: nothing };
  const proxy = await ensureProxy(engine, instance, options);
  const name = buildLinkContainerName(instance.name);
  // One left by a build that was cut off: a fresh one.
  const left = await inspectOurs(engine, name, instance, 'build-link');
  if (left) await removeIfPresent(engine, left.Id);
  await ensureRunning(engine, instance, linkOptions(proxy, name, 'none', { [LABEL.egressRole]: 'build-link' }), 'build-link', LABEL.imageHash, options.onProgress);
  await untilListening(engine, name);
  // Docker's predefined proxy arguments: set for every step, kept out of the image and its history and cache keys.
  return { networkmode: `container:${name}`, buildargs: proxyEnv(), release: () => removeIfPresent(engine, name) };
}

/** Wait until the link accepts connections on 127.0.0.1:3128 (a LISTEN socket in its namespace). */
async function untilListening(engine: Engine, container: string): Promise<void> {
  const listening = / 0100007F:0C38 00000000:0000 0A /;
  for (let i = 0; i < 100; i++) {
    const tcp = await execIn(engine, container).run(['cat', '/proc/net/tcp'], { timeoutMs: 5_000 });
    if (listening.test(tcp.stdout)) return;
    await sleep(50);
  }
  throw new CodedError('CONTAINER_FAILED', `The egress link ${container} for the image build does not listen on 127.0.0.1:3128. Its log: docker logs ${container}`);
}

/** Remove the instance's egress containers and volume (by name, and only when the labels say they are its). */
export async function removeEgress(engine: Engine, instance: Instance): Promise<void> {
  for (const [name, role] of [
    [linkContainerName(instance.name), 'link'],
    [buildLinkContainerName(instance.name), 'build-link'],
    [proxyContainerName(instance.name), 'proxy'],
  ] as const) {
    const info = await inspectOurs(engine, name, instance, role);
    if (info) await removeIfPresent(engine, info.Id);
  }
  const volume = engine.docker.getVolume(socketVolumeName(instance.name));
  const info = await volume.inspect().catch((error: unknown) => (statusCode(error) === 404 ? undefined : Promise.reject(error)));
  if (info?.Labels?.[LABEL.instance] === instance.name) await volume.remove().catch(() => undefined);
}

export interface EgressStatus {
  policy: 'allowlist' | 'none' | 'open';
  /** The allow list, for people (`deb.debian.org:80,443`); empty unless allowlist. */
  allowed: string[];
  /** For allowlist: whether the proxy and link run. */
  proxyRunning?: boolean;
}

export function egressSummary(instance: Instance): EgressStatus {
  const policy = instance.config.container.network;
  return { policy, allowed: policy === 'allowlist' ? allowEntries(instance).map(describeAllowEntry) : [] };
}

/** Whether the proxy and link are up, without changing anything. */
export async function egressStatus(engine: Engine, instance: Instance): Promise<EgressStatus> {
  const summary = egressSummary(instance);
  if (summary.policy !== 'allowlist') return summary;
  const proxy = await inspectOurs(engine, proxyContainerName(instance.name), instance, 'proxy');
  const link = await inspectOurs(engine, linkContainerName(instance.name), instance, 'link');
  return { ...summary, proxyRunning: Boolean(proxy?.State.Running && link?.State.Running) };
}
