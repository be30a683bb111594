import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { connectEngine, type Engine } from '../../src/sandbox/engine/engine.js';
import { pollUntil } from './poll.js';

const run = promisify(execFile);

/**
 * A second Docker daemon on this machine, standing in for an engine on another machine. It runs
 * in a network namespace made here (`ip netns add`, entered with nsenter for the network only),
 * joined to this one by a veth pair with link-local addresses: the daemon's network changes stay
 * in its namespace. (Started in this machine's namespace with `--bridge=none`, dockerd deletes
 * the shared daemon's docker0: seen here, 2026-12-06.) It has its own data root, exec root (and
 * so its own containerd), pid file, socket and cgroup parent, no iptables rules, and listens on
 * the namespace's address with mutual TLS, the certificates made here (a CA, a server
 * certificate for that address, a client certificate). Its containers run with `--network none`.
 * The caller loads the images it needs (`loadImage`) and calls `stop()` in afterAll.
 */
export interface RemoteEngine {
  /** `tcp://169.254.A.B:2376`: the daemon's address in its namespace. */
  readonly address: string;
  /** ca.pem, cert.pem, key.pem for the client (DOCKER_CERT_PATH). */
  readonly certDir: string;
  /** Its local socket, for setting it up only (a test reaches it through `address`). */
  readonly socket: string;
  /** Environment that makes the kernel reach it with TLS. */
  readonly env: NodeJS.ProcessEnv;
  loadImage(from: Engine, tag: string): Promise<void>;
  stop(): Promise<void>;
}

/** The namespace and its veth pair: `169.254.<a>.<b+1>` on this side, `<b+2>` in the namespace. */
interface Namespace {
  readonly name: string;
  readonly hostIp: string;
  readonly engineIp: string;
  remove(): Promise<void>;
}

async function makeNamespace(): Promise<Namespace> {
  const tag = randomBytes(3).toString('hex');
  const name = `akr-${tag}`;
  const a = 1 + (randomBytes(1)[0] as number) % 250;
  const b = 4 * ((randomBytes(1)[0] as number) % 63);
  const hostIp = `169.254.${a}.${b + 1}`;
  const engineIp = `169.254.${a}.${b + 2}`;
  const ip = (...args: string[]) => run('ip', args);
  await ip('netns', 'add', name);
  const remove = async (): Promise<void> => {
    // The veth pair goes with the namespace.
    await ip('netns', 'del', name).catch(() => undefined);
    await ip('link', 'del', `akh${tag}`).catch(() => undefined);
  };
  try {
    await ip('link', 'add', `akh${tag}`, 'type', 'veth', 'peer', 'name', `akn${tag}`, 'netns', name);
    await ip('addr', 'add', `${hostIp}/30`, 'dev', `akh${tag}`);
    await ip('link', 'set', `akh${tag}`, 'up');
    await ip('-n', name, 'addr', 'add', `${engineIp}/30`, 'dev', `akn${tag}`);
    await ip('-n', name, 'link', 'set', `akn${tag}`, 'up');
    await ip('-n', name, 'link', 'set', 'lo', 'up');
  } catch (error) {
    await remove();
    throw error;
  }
  return { name, hostIp, engineIp, remove };
}

async function openssl(dir: string, ...args: string[]): Promise<void> {
  await run('openssl', args, { cwd: dir });
}

/** A CA, a server certificate for the engine's address and a client certificate, in `dir`. */
async function makeCertificates(dir: string, ip: string): Promise<void> {
  await openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=agent-kernel test CA');
  await openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server-key.pem', '-out', 'server.csr', '-subj', `/CN=${ip}`);
  await writeFile(path.join(dir, 'server.ext'), `subjectAltName=IP:${ip}\nextendedKeyUsage=serverAuth\n`);
  await openssl(dir, 'x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'server-cert.pem', '-days', '2', '-extfile', 'server.ext');
  await openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'client.csr', '-subj', '/CN=agent-kernel client');
  await writeFile(path.join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  await openssl(dir, 'x509', '-req', '-in', 'client.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'cert.pem', '-days', '2', '-extfile', 'client.ext');
}

export async function startRemoteEngine(): Promise<RemoteEngine> {
  // Short paths: the exec root holds containerd's sockets (108-byte limit on a socket path).
  const root = await mkdtemp(path.join('/tmp', 'akr-'));
  const certDir = path.join(root, 'certs');
  await mkdir(certDir);
  const namespace = await makeNamespace();
  await makeCertificates(certDir, namespace.engineIp);
  const port = 2376;
  const socket = path.join(root, 'd.sock');
  await writeFile(path.join(root, 'daemon.json'), '{}\n');
  const log = createWriteStream(path.join(root, 'dockerd.log'));
  const daemon: ChildProcess = spawn(
    'nsenter',
    [
      `--net=/run/netns/${namespace.name}`,
      '--',
      'dockerd',
      '--config-file', path.join(root, 'daemon.json'),
      '--data-root', path.join(root, 'data'),
      '--exec-root', path.join(root, 'x'),
      '--pidfile', path.join(root, 'dockerd.pid'),
      '-H', `unix://${socket}`,
      '-H', `tcp://${namespace.engineIp}:${port}`,
      '--cgroup-parent', `/${namespace.name}`,
      '--tlsverify',
      '--tlscacert', path.join(certDir, 'ca.pem'),
      '--tlscert', path.join(certDir, 'server-cert.pem'),
      '--tlskey', path.join(certDir, 'server-key.pem'),
      '--bridge=none',
      '--iptables=false',
      '--ip-masq=false',
      '--ip-forward=false',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  daemon.stdout?.pipe(log);
  daemon.stderr?.pipe(log);
  let exited = false;
  daemon.once('exit', () => (exited = true));
  const address = `tcp://${namespace.engineIp}:${port}`;
  const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: certDir };
  delete env.DOCKER_HOST;

  const stop = async (): Promise<void> => {
    if (!exited && daemon.pid !== undefined) {
      // Its containers first (each has a shim of the daemon's own containerd), then the daemon itself, by its pid.
      await run('docker', ['-H', `unix://${socket}`, 'ps', '-aq']).then(
        async ({ stdout }) => {
          const ids = stdout.split('\n').filter(Boolean);
          if (ids.length > 0) await run('docker', ['-H', `unix://${socket}`, 'rm', '-f', ...ids]).catch(() => undefined);
        },
        () => undefined,
      );
      daemon.kill('SIGTERM');
      await pollUntil(() => exited, 'the test dockerd to stop', { timeoutMs: 60_000 }).catch(() => daemon.kill('SIGKILL'));
    }
    // The daemon's mounts under its data root are gone with it; what is left is files.
    await rm(root, { recursive: true, force: true }).catch(() => undefined);
    await namespace.remove();
  };

  try {
    await pollUntil(
      async () => {
        if (exited) throw new Error(`the test dockerd exited: ${(await readFile(path.join(root, 'dockerd.log'), 'utf8')).slice(-2000)}`);
        return connectEngine({ socket: address, env, timeoutMs: 2000 }).then(
          () => true,
          () => false,
        );
      },
      'the test dockerd to answer over TLS',
      { timeoutMs: 90_000, intervalMs: 500 },
    );
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    address,
    certDir,
    socket,
    env,
    async loadImage(from: Engine, tag: string): Promise<void> {
      const local = await connectEngine({ socket: `unix://${socket}`, env });
      const images = await local.docker.listImages({ filters: JSON.stringify({ reference: [tag] }) });
      if (images.length > 0) return;
      const stream = await from.docker.getImage(tag).get();
      const loading = (await local.docker.loadImage(stream)) as NodeJS.ReadableStream;
      await new Promise<void>((resolve, reject) => {
        loading.on('data', () => undefined);
        loading.on('end', resolve);
        loading.on('error', reject);
      });
    },
    stop,
  };
}
