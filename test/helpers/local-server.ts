import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { connectEngine } from '../../src/sandbox/engine.js';

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
  const local = new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address)));
  // Only ever an address of this machine.
  const gateway = candidates.find((c) => c !== undefined && local.has(c));
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
