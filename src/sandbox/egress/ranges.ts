import { isIP } from 'node:net';
import os from 'node:os';
import type { Engine } from '../engine/engine.js';

/**
 * What the egress proxy never connects to for a name, whatever the name resolved to: every
 * address that is not the public internet (IANA's special-purpose registries), the cloud
 * metadata services, and IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4, Teredo).
 * Squid checks the addresses it resolved and then connects to those same addresses, so an
 * allowed name (or a wildcard whose DNS the agent controls) cannot lead it onto the host, the
 * engine's bridges or the operator's network. An operator reaches a private destination by
 * naming it as an IP or CIDR entry of container.allow.
 * Not listed: the documentation (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24) and benchmarking
 * (198.18.0.0/15) ranges. Nothing on the internet is there, and networks that front the
 * internet put their mirrors or fake-IP DNS answers there (this project's CI resolves Debian's
 * mirror to 203.0.113.80); the host's own subnets are refused whatever their range (localDestinations).
 */
export const NOT_INTERNET: readonly string[] = [
  // IPv4
  '0.0.0.0/8', // "this network"; 0.0.0.0 is the proxy's own host
  '10.0.0.0/8', // private
  '100.64.0.0/10', // shared address space (CGNAT); 100.100.100.200 is Alibaba Cloud's metadata
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local; 169.254.169.254 is the AWS/GCP/Azure/OpenStack metadata
  '172.16.0.0/12', // private (Docker's default bridges)
  '192.0.0.0/24', // IETF protocol assignments; 192.0.0.192 is Oracle Cloud's metadata
  '192.88.99.0/24', // 6to4 relays
  '192.168.0.0/16', // private
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, and 255.255.255.255
  '168.63.129.16/32', // Azure's host endpoint (public space, but the host's)
  // IPv6
  '::/96', // unspecified, loopback, IPv4-compatible
  '::ffff:0:0/96', // IPv4-mapped
  '64:ff9b::/96', // NAT64
  '64:ff9b:1::/48', // local NAT64
  '100::/64', // discard
  '2001::/32', // Teredo
  '2001:db8::/32', // documentation
  '2002::/16', // 6to4
  'fc00::/7', // unique local; fd00:ec2::254 is AWS's IPv6 metadata
  'fe80::/10', // link-local
  'fec0::/10', // site-local (deprecated)
  'ff00::/8', // multicast
];

/** Pure: an address or network as squid's `dst` takes it (zone index dropped), or undefined. */
export function squidAddress(text: string): string | undefined {
  const [address = '', bits] = text.split('%')[0]!.split('/');
  if (isIP(address) === 0) return undefined;
  if (bits === undefined) return address;
  const max = isIP(address) === 4 ? 32 : 128;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= max ? `${address}/${bits}` : undefined;
}

/** Pure: `192.0.2.2/24` → `192.0.2.0/24` (squid wants the network's own address); an address alone is unchanged. */
export function networkOf(cidr: string): string {
  const [address = '', bits] = cidr.split('/');
  if (bits === undefined || isIP(address) !== 4) return cidr;
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  const value = address.split('.').reduce((n, part) => (n << 8) + Number(part), 0) >>> 0;
  const network = (value & mask) >>> 0;
  return `${[24, 16, 8, 0].map((shift) => (network >>> shift) & 255).join('.')}/${bits}`;
}

interface NetworkInfo {
  IPAM?: { Config?: { Subnet?: string; Gateway?: string }[] | null } | null;
}

/**
 * The engine's networks (every bridge: the host and the other containers are on them) and,
 * for an engine on this machine, the host's own addresses and the networks they are on (its
 * LAN): refused like NOT_INTERNET, so a host or a neighbour with a public address is not
 * reached through it either.
 */
export async function localDestinations(engine: Engine): Promise<string[]> {
  const found = new Set<string>();
  const networks = (await engine.docker.listNetworks().catch(() => [])) as NetworkInfo[];
  for (const network of networks) {
    for (const config of network.IPAM?.Config ?? []) {
      for (const text of [config.Subnet, config.Gateway]) {
        const address = text && squidAddress(text);
        if (address) found.add(address);
      }
    }
  }
  if (engine.address.startsWith('unix://')) {
    for (const addresses of Object.values(os.networkInterfaces())) {
      for (const { address, cidr, internal } of addresses ?? []) {
        for (const text of internal ? [address] : [address, cidr ?? undefined]) {
          const usable = text && squidAddress(networkOf(text));
          if (usable) found.add(usable);
        }
      }
    }
  }
  return [...found].sort();
}
