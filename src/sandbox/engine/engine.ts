import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Dockerode from 'dockerode';
import { DockerodeClient } from './dockerode.js';
import { CodedError, describeError } from '../../errors.js';
import { sleep } from '../../util/sleep.js';

/** A container engine that answered: Docker, or Podman through its Docker-compatible API. */
export interface Engine {
  readonly docker: Dockerode;
  /** Where it answered, as an address (`unix:///var/run/docker.sock`, `tcp://host:2375`...). */
  readonly address: string;
  readonly name: 'docker' | 'podman';
  readonly version: string;
  readonly apiVersion: string;
}

export interface ConnectOptions {
  /** The operator's choice (engineSetting: `container.engine`, a name or an address); wins over DOCKER_HOST. */
  socket?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** How long one address may take to answer a ping. */
  timeoutMs?: number;
  /** A new connection, neither taken from nor kept for reuse (doctor: the check makes its own, with these env's TLS files). */
  fresh?: boolean;
}

const DEFAULT_PING_TIMEOUT_MS = 3000;
const VERSION_TIMEOUT_MS = 30_000;

/** The operator's engine for an instance: `container.engine`, else its former name `engine_socket`; undefined: DOCKER_HOST or the first that answers. */
export function engineSetting(container: { engine?: string | undefined; engine_socket?: string | undefined }): string | undefined {
  return container.engine ?? container.engine_socket;
}

export const DOCKER_SOCKET = 'unix:///var/run/docker.sock';
export const ROOTFUL_PODMAN_SOCKET = 'unix:///run/podman/podman.sock';

/** Podman's socket for this user: root's, or the user's own under XDG_RUNTIME_DIR (else /run/user/<uid>). */
export function podmanSocket(env: NodeJS.ProcessEnv = process.env, uid: number = process.getuid?.() ?? 0): string {
  if (uid === 0) return ROOTFUL_PODMAN_SOCKET;
  return `unix://${path.join(env.XDG_RUNTIME_DIR || `/run/user/${uid}`, 'podman', 'podman.sock')}`;
}

/**
 * The addresses to try, in order. An explicit choice (the config's engine, else DOCKER_HOST) is
 * the only one tried: the operator chose it, so falling back elsewhere would hide their mistake;
 * `docker` and `podman` name their local sockets. Otherwise: Docker's default socket, then Podman's (rootless, rootful).
 */
export function engineCandidates(socket: string | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  if (socket === 'docker') return [DOCKER_SOCKET];
  if (socket === 'podman') return [podmanSocket(env)];
  if (socket) return [normalizeAddress(socket)];
  if (env.DOCKER_HOST) return [normalizeAddress(env.DOCKER_HOST)];
  const candidates = [DOCKER_SOCKET];
  if (env.XDG_RUNTIME_DIR) candidates.push(`unix://${path.join(env.XDG_RUNTIME_DIR, 'podman', 'podman.sock')}`);
  candidates.push(ROOTFUL_PODMAN_SOCKET);
  return candidates;
}

/** `/path.sock` → `unix:///path.sock`; `host:2375` → `tcp://host:2375`. */
export function normalizeAddress(address: string): string {
  if (address.startsWith('/')) return `unix://${address}`;
  if (!address.includes('://')) return `tcp://${address}`;
  return address;
}

/** Pure: an address → dockerode options. Every field is set so that DOCKER_HOST in the environment cannot leak in. */
export function dockerodeOptions(address: string, env: NodeJS.ProcessEnv = process.env): Dockerode.DockerOptions {
  const normalized = normalizeAddress(address);
  if (normalized.startsWith('unix://')) {
    return { socketPath: normalized.slice('unix://'.length), host: undefined, port: undefined, protocol: undefined };
  }
  let url: URL;
  try {
    url = new URL(normalized);
  } catch (error) {
    throw new CodedError(
      'CONFIG_INVALID',
      `Engine address ${JSON.stringify(address)} is not valid: use unix:///path/to.sock, tcp://host:port or ssh://user@host.`,
      { cause: error },
    );
  }
  if (url.protocol === 'ssh:') {
    return {
      protocol: 'ssh',
      host: url.hostname,
      port: url.port || 22,
      username: decodeURIComponent(url.username) || os.userInfo().username,
      socketPath: undefined,
      sshOptions: { agent: env.SSH_AUTH_SOCK },
    } as Dockerode.DockerOptions;
  }
  if (url.protocol === 'tcp:' || url.protocol === 'http:' || url.protocol === 'https:') {
    const tls = usesTls(url, env);
    return {
      protocol: tls ? 'https' : 'http',
      host: url.hostname,
      port: url.port || (tls ? 2376 : 2375),
      socketPath: undefined,
      ...(tls ? tlsFiles(address, env) : {}),
    };
  }
  throw new CodedError(
    'CONFIG_INVALID',
    `Engine address ${JSON.stringify(address)} has an unknown scheme: use unix://, tcp:// or ssh://.`,
  );
}

/** Pure: whether a tcp:// (or http(s)://) engine address is reached with TLS, as Docker's CLI decides it. */
export function usesTls(url: URL, env: NodeJS.ProcessEnv = process.env): boolean {
  return url.protocol === 'https:' || env.DOCKER_TLS_VERIFY === '1' || url.port === '2376';
}

/** Where the client's certificates are: DOCKER_CERT_PATH, else ~/.docker (the operator's files, never the agent's). */
export function tlsCertDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.DOCKER_CERT_PATH || path.join(env.HOME || os.homedir(), '.docker');
}

/** The client's certificates for an engine reached with TLS, as Docker's CLI finds them: ca.pem, cert.pem and key.pem in tlsCertDir. */
function tlsFiles(address: string, env: NodeJS.ProcessEnv): { ca: Buffer; cert: Buffer; key: Buffer } {
  const dir = tlsCertDir(env);
  const read = (name: string): Buffer => {
    try {
      return readFileSync(path.join(dir, name));
    } catch (error) {
      throw new CodedError(
        'CONFIG_INVALID',
        `The engine at ${address} is reached with TLS, but ${path.join(dir, name)} cannot be read (${describeError(error)}). ` +
          'Put the CA (ca.pem) and this client\'s certificate and key (cert.pem, key.pem) there, or point DOCKER_CERT_PATH at the folder that has them.',
        { cause: error },
      );
    }
  };
  return { ca: read('ca.pem'), cert: read('cert.pem'), key: read('key.pem') };
}

/** Run an engine request with a deadline; the request is aborted (its socket closed) when it passes. */
async function withTimeout<T>(request: (signal: AbortSignal) => Promise<T>, ms: number, what: string): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`${what}: no answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([request(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** dockerode takes an abortSignal on these calls; its type definitions do not say so. */
interface AbortableCalls {
  ping(options: { abortSignal: AbortSignal }): Promise<unknown>;
  version(options: { abortSignal: AbortSignal }): Promise<Dockerode.DockerVersion>;
}

function abortable(docker: Dockerode): AbortableCalls {
  return docker as unknown as AbortableCalls;
}

async function tryAddress(address: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Engine> {
  const docker = new DockerodeClient(dockerodeOptions(address, env));
  await withTimeout((abortSignal) => abortable(docker).ping({ abortSignal }), timeoutMs, address);
  // It answered the ping: the version may take longer. Podman's runs `conmon --version` and its runtimes' for it: 3-7 s at load 20.
  const version = await withTimeout((abortSignal) => abortable(docker).version({ abortSignal }), Math.max(timeoutMs, VERSION_TIMEOUT_MS), address);
  const isPodman = (version.Components ?? []).some((c) => /podman/i.test(c.Name)) || /podman/i.test(version.Platform?.Name ?? '');
  return { docker, address, name: isPodman ? 'podman' : 'docker', version: version.Version, apiVersion: version.ApiVersion };
}

export function engineUnreachableMessage(tried: readonly { address: string; error: string }[]): string {
  return [
    'No container engine answered. Tried:',
    ...tried.map((t) => `  ${t.address}: ${t.error}`),
    'Start one, then try again:',
    '  npm run setup                      (installs docker.io if needed and starts dockerd)',
    '  sudo dockerd &                     (Docker, no systemd)',
    '  sudo systemctl start docker        (Docker, with systemd)',
    `  podman system service --time=0 unix://${process.env.XDG_RUNTIME_DIR ?? '/run/user/$UID'}/podman/podman.sock &   (Podman)`,
    'or point DOCKER_HOST (or container.engine in the operator configuration) at a running engine.',
  ].join('\n');
}

const connected = new Map<string, Engine>();

/**
 * Connect to the first engine that answers a ping. Throws ENGINE_UNREACHABLE (naming every
 * address tried and how to start an engine) when none does; never hangs longer than
 * timeoutMs per address. Successful connections are reused.
 */
export async function connectEngine(options: ConnectOptions = {}): Promise<Engine> {
  const env = options.env ?? process.env;
  const timeoutMs = options.timeoutMs ?? DEFAULT_PING_TIMEOUT_MS;
  const candidates = engineCandidates(options.socket, env);
  const tried: { address: string; error: string }[] = [];
  for (const address of candidates) {
    try {
      const cached = options.fresh ? undefined : connected.get(address);
      if (cached) {
        // Reuse the connection, but make sure the engine still answers.
        await withTimeout((abortSignal) => abortable(cached.docker).ping({ abortSignal }), timeoutMs, address);
        return cached;
      }
      const engine = await tryAddress(address, env, timeoutMs);
      if (!options.fresh) connected.set(address, engine);
      return engine;
    } catch (error) {
      if (error instanceof CodedError) throw error;
      tried.push({ address, error: describeError(error) });
    }
  }
  throw new CodedError('ENGINE_UNREACHABLE', engineUnreachableMessage(tried), { details: { tried } });
}

/**
 * An engine on another machine (reached over TCP or ssh, not a local socket): it cannot see this
 * machine's folders, so an instance's data directory is a volume there (files/engine-files.ts).
 */
export function isRemoteEngine(engine: Pick<Engine, 'address'>): boolean {
  return !normalizeAddress(engine.address).startsWith('unix://');
}

/** The volume that holds an instance's data directory on a remote engine. */
export function dataVolumeName(instanceName: string): string {
  return `agent-kernel-${instanceName}-data`;
}

/** "docker 20.10.24 at unix:///var/run/docker.sock" */
export function describeEngine(engine: Engine): string {
  return `${engine.name} ${engine.version} (API ${engine.apiVersion}) at ${engine.address}`;
}

/** HTTP status of a dockerode error, if it has one. */
export function statusCode(error: unknown): number | undefined {
  const code = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** A container's inspect data by name; undefined when there is none. Any other failure is CONTAINER_FAILED. */
export async function inspectNamed(engine: Engine, name: string): Promise<Dockerode.ContainerInspectInfo | undefined> {
  try {
    return await engine.docker.getContainer(name).inspect();
  } catch (error) {
    if (statusCode(error) === 404) return undefined;
    throw new CodedError('CONTAINER_FAILED', `Cannot inspect container ${name}: ${describeError(error)}`, { cause: error });
  }
}

/**
 * Remove a container, running or not. Podman refuses while another container shares its namespaces
 * (an egress link in the agent's network namespace), where Docker removes it and leaves the other
 * without one; its own API's `depend` removes those with it, which is what Docker's removal comes to.
 * A missing container is a 404 error, as with dockerode.
 */
export async function forceRemoveContainer(engine: Engine, id: string): Promise<void> {
  if (engine.name === 'docker') {
    await engine.docker.getContainer(id).remove({ force: true });
    return;
  }
  await new Promise<void>((resolve, reject) => {
    engine.docker.modem.dial(
      {
        path: `/v4.0.0/libpod/containers/${encodeURIComponent(id)}?`,
        method: 'DELETE',
        options: { force: true, depend: true },
        statusCodes: { 200: true, 204: true, 404: 'no such container', 409: 'conflict', 500: 'server error' },
      },
      (error: unknown) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve()),
    );
  });
}

/**
 * Create a container by name, or find the one another process creates at the same moment (a
 * watch, its kernel and a tick bring an instance up together). The engine reserves the name
 * before the container exists, and keeps it while a removal finishes: a create that loses the
 * race gets "name in use" while nothing answers to the name yet. So a 409 with nothing to
 * inspect is waited out (up to `waitMs`), not reported. Returns what now has the name, for
 * the caller to check that it is its own (labels).
 */
export async function createOrFindContainer(
  engine: Engine,
  options: Dockerode.ContainerCreateOptions & { name: string },
  waitMs = 60_000,
): Promise<{ created: boolean; info: Dockerode.ContainerInspectInfo | undefined }> {
  const deadline = Date.now() + waitMs;
  for (let pause = 100; ; pause = Math.min(pause * 2, 2_000)) {
    try {
      await engine.docker.createContainer(options);
      return { created: true, info: await inspectNamed(engine, options.name) };
    } catch (error) {
      if (!nameInUse(error)) throw new CodedError('CONTAINER_FAILED', `Cannot create container ${options.name}: ${describeError(error)}`, { cause: error });
      const info = await inspectNamed(engine, options.name);
      if (info) return { created: false, info };
      if (Date.now() > deadline) {
        throw new CodedError(
          'CONTAINER_FAILED',
          `Cannot create container ${options.name}: ${engine.address} says the name is in use, but no container answers to it after ${Math.round(waitMs / 1000)} s (one being created or removed that never finished). ` +
            `See docker ps -a --filter name=${options.name}, then try again.`,
          { cause: error },
        );
      }
      await sleep(pause);
    }
  }
}

/** "Name in use": Docker's 409; Podman 4.3 answers the same with a 500 that says so. */
function nameInUse(error: unknown): boolean {
  return statusCode(error) === 409 || (statusCode(error) === 500 && /name .* is already in use/.test(describeError(error)));
}
