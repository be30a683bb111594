import { isIP } from 'node:net';

/**
 * One entry of `container.allow`, the destinations an `allowlist` instance may reach:
 * `host`, `*.domain` (the domain and every subdomain), an IPv4 address or CIDR, each with
 * an optional `:port` (or `:*` for any port). Without a port, 80 and 443 are allowed.
 */
export interface AllowEntry {
  kind: 'domain' | 'wildcard' | 'ip' | 'cidr';
  /** The host as the proxy matches it: `example.com`, `.example.com` for a wildcard, `10.0.0.0/8`. */
  host: string;
  /** Allowed destination ports; `any` for `:*`. */
  ports: number[] | 'any';
  /** As the operator wrote it. */
  text: string;
}

/** The package sources of the built-in image (Debian's mirror network), so apt works out of the box. */
export const DEFAULT_ALLOW = ['deb.debian.org', 'security.debian.org'] as const;
export const DEFAULT_PORTS = [80, 443] as const;

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function isDomain(host: string): boolean {
  return host.length <= 253 && host.split('.').length >= 1 && host.split('.').every((label) => LABEL.test(label));
}

/** Pure: parse one entry; throws an Error whose message says what is wrong and what would be right. */
export function parseAllowEntry(text: string): AllowEntry {
  const trimmed = text.trim().toLowerCase();
  const match = /^(.*?)(?::(\d{1,5}|\*))?$/.exec(trimmed);
  const host = match?.[1] ?? '';
  const portText = match?.[2];
  let ports: AllowEntry['ports'] = [...DEFAULT_PORTS];
  if (portText === '*') ports = 'any';
  else if (portText !== undefined) {
    const port = Number(portText);
    if (port < 1 || port > 65_535) throw new Error(`${JSON.stringify(text)}: port ${portText} is not between 1 and 65535`);
    ports = [port];
  }
  if (host.includes(':') || host.startsWith('[')) throw new Error(`${JSON.stringify(text)}: IPv6 destinations are not supported; name the host instead`);
  const cidr = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(host);
  if (cidr) {
    if (isIP(cidr[1] ?? '') !== 4 || Number(cidr[2]) > 32) throw new Error(`${JSON.stringify(text)}: not an IPv4 network such as 10.0.0.0/8`);
    return { kind: 'cidr', host, ports, text };
  }
  if (isIP(host) === 4) return { kind: 'ip', host, ports, text };
  if (/^\d+(\.\d+)*$/.test(host)) throw new Error(`${JSON.stringify(text)}: not a valid IPv4 address`);
  if (host.startsWith('*.')) {
    const domain = host.slice(2);
    if (!isDomain(domain) || !domain.includes('.')) throw new Error(`${JSON.stringify(text)}: a wildcard covers a domain with at least two labels, such as *.example.com`);
    return { kind: 'wildcard', host: `.${domain}`, ports, text };
  }
  if (!isDomain(host)) {
    throw new Error(`${JSON.stringify(text)}: expected a host name (example.com), a wildcard (*.example.com), an IPv4 address or CIDR, each optionally with :port or :*`);
  }
  return { kind: 'domain', host, ports, text };
}

/** Pure: `deb.debian.org` → "deb.debian.org:80,443", for people. */
export function describeAllowEntry(entry: AllowEntry): string {
  const host = entry.kind === 'wildcard' ? `*${entry.host}` : entry.host;
  return `${host}:${entry.ports === 'any' ? '*' : entry.ports.join(',')}`;
}
