import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { connectEngine } from '../../src/sandbox/engine/engine.js';

function isLocalAddress(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createTcpServer();
    probe.once('error', () => resolve(false));
    probe.listen(0, address, () => probe.close(() => resolve(true)));
  });
}

/**
 * The host's address on the engine's default bridge (docker0's gateway): a server bound
 * there is on this machine, and a container on the bridge can reach it. Tests of the
 * network policies only ever talk to servers like that (never to another machine).
 */
export async function bridgeGateway(): Promise<string> {
  const engine = await connectEngine();
  const info = await engine.docker.getNetwork('bridge').inspect();
  const config = (info as { IPAM?: { Config?: { Gateway?: string; Subnet?: string }[] } }).IPAM?.Config ?? [];
  // Docker 20.10 leaves Gateway out for the default bridge: it is the subnet's first address.
  const candidates = config.flatMap((c) => [c.Gateway, c.Subnet && /^(\d+\.\d+\.\d+)\.0\/\d+$/.exec(c.Subnet)?.[1] ? `${/^(\d+\.\d+\.\d+)\./.exec(c.Subnet)?.[1]}.1` : undefined]);
  // Only ever an address of this machine: binding succeeds only on an address assigned here. (networkInterfaces()
  // leaves out docker0 while no container is attached to it: libuv lists only interfaces that are up and running.)
  let gateway: string | undefined;
  for (const candidate of candidates) if (candidate !== undefined && !gateway && (await isLocalAddress(candidate))) gateway = candidate;
  if (!gateway) throw new Error(`none of ${candidates.join(', ')} (the engine's bridge gateway) is an address of this machine`);
  return gateway;
}

export interface LocalServer {
  host: string;
  port: number;
  /** Requests seen, as "METHOD path". */
  requests: string[];
  close(): Promise<void>;
}

/** An HTTP server on `host` that answers every GET with `body` (and /big with `bigBytes` zeros). */
export async function startLocalServer(host: string, body: string, bigBytes = 0): Promise<LocalServer> {
  const requests: string[] = [];
  const big = Buffer.alloc(bigBytes);
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (req.url === '/big') {
      res.writeHead(200, { 'content-length': big.length, 'content-type': 'application/octet-stream' });
      res.end(big);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  return {
    host,
    port: (server.address() as AddressInfo).port,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
