import type { AllowEntry } from '../../config/egress-allow.js';
import { NOT_INTERNET } from './ranges.js';

/**
 * Squid's side of the allowlist policy: the configuration the egress proxy runs with, and
 * the access-log line format it writes (one line per connection, allowed or refused).
 *
 * Why these choices:
 * - Domain ACLs use `-n` and IP ACLs apply only to requests that name an IP literal, so
 *   judging a request never resolves a name: a refused name causes no DNS query at all.
 * - An allowed name reaches only the public internet: after resolving it, squid refuses it when
 *   any of its addresses is private, loopback, link-local, shared, multicast, metadata, an
 *   IPv6 form of those, the engine's networks or the host's own addresses (ranges.ts),
 *   whatever the letter case, trailing dot or port. The operator reaches a private destination
 *   by naming it as an IP or CIDR entry: those match only requests that name that address.
 * - The cache manager and anything not matched are refused; nothing is cached (a proxy
 *   for one agent gains little from a cache and must not keep what the agent fetched).
 */

export const PROXY_PORT = 3128;
export const PROXY_URL = `http://127.0.0.1:${PROXY_PORT}`;

/** The environment the instance's processes get under `allowlist`, so ordinary tools use the proxy. */
export function proxyEnv(): Record<string, string> {
  const noProxy = 'localhost,127.0.0.1,::1';
  return { HTTP_PROXY: PROXY_URL, HTTPS_PROXY: PROXY_URL, http_proxy: PROXY_URL, https_proxy: PROXY_URL, NO_PROXY: noProxy, no_proxy: noProxy };
}

/** Where the entry script and `apply` keep the config inside the proxy container. */
export const SQUID_CONFIG_PATH = '/etc/squid/agent-kernel.conf';

/** `time decision/status method host:port bytes-to-client bytes-from-client` */
const LOG_FORMAT = '%ts.%03tu %Ss/%03>Hs %rm %>rd:%>rP %<st %>st';

function portsAcl(name: string, ports: AllowEntry['ports']): string[] {
  return ports === 'any' ? [] : [`acl ${name} port ${ports.join(' ')}`];
}

/** Squid's `acl` lines for one name holding many values, a few values a line. */
function aclLines(name: string, type: string, values: readonly string[]): string[] {
  const lines: string[] = [];
  for (let i = 0; i < values.length; i += 8) lines.push(`acl ${name} ${type} ${values.slice(i, i + 8).join(' ')}`);
  return lines;
}

/**
 * Pure: the full squid.conf for an allowlist. Entries are already validated (parseAllowEntry);
 * `local` is the engine's networks and the host's addresses (ranges.ts localDestinations).
 */
export function squidConfig(entries: readonly AllowEntry[], local: readonly string[] = []): string {
  const lines = [
    '# Written by agent-kernel from container.allow; changes here are overwritten.',
    `http_port 127.0.0.1:${PROXY_PORT}`,
    'pid_filename /run/squid/squid.pid',
    'cache deny all',
    'cache_mem 8 MB',
    'coredump_dir none',
    'shutdown_lifetime 1 seconds',
    'connect_timeout 15 seconds',
    'via off',
    'forwarded_for delete',
    `logformat agentkernel ${LOG_FORMAT}`,
    'access_log stdio:/var/log/squid/access.log agentkernel',
    'cache_log stdio:/var/log/squid/cache.log',
    'acl ip_literal dstdom_regex -n ^[0-9]+(\\.[0-9]+){3}$',
    // Where a name never leads: everything but the public internet, and this machine's own networks.
    ...aclLines('not_internet', 'dst', [...NOT_INTERNET, ...local]),
    'http_access deny manager',
  ];
  entries.forEach((entry, index) => {
    const host = `allow${index}`;
    const port = `allow${index}_ports`;
    const portRule = entry.ports === 'any' ? '' : ` ${port}`;
    lines.push(`# ${entry.text}`);
    if (entry.kind === 'ip' || entry.kind === 'cidr') {
      lines.push(`acl ${host} dst ${entry.host}`, ...portsAcl(port, entry.ports), `http_access allow ip_literal ${host}${portRule}`);
    } else {
      // !not_internet is checked last, so only an allowed name is ever resolved.
      lines.push(`acl ${host} dstdomain -n ${entry.host}`, ...portsAcl(port, entry.ports), `http_access allow ${host}${portRule} !not_internet`);
    }
  });
  lines.push('http_access deny all', '');
  return lines.join('\n');
}

/** One connection through the proxy, from its access log. */
export interface EgressRecord {
  /** Milliseconds since the epoch. */
  time: number;
  decision: 'allowed' | 'refused' | 'failed';
  /** Squid's result code, e.g. TCP_TUNNEL/200, TCP_DENIED/403, NONE_NONE/400 (a request it could not parse). */
  result: string;
  /** As the agent sent it, escaped for display (printable ASCII only). */
  method: string;
  /** As squid logged it (its own %-escapes kept), escaped for display; `-` when the request named none. */
  host: string;
  /** Undefined when the request named none (`-`). */
  port: number | undefined;
  /** `host:port` (or `host`), for people and for counting. */
  destination: string;
  /** Bytes the proxy sent to the agent (squid's `%<st`: the reply, its own error page included). */
  bytesIn: number;
  /** Bytes the agent sent (squid's `%>st`: the request line, headers and body). */
  bytesOut: number;
}

/**
 * Pure: anything the agent chose, made safe to print anywhere (a terminal, a log line, the
 * agent's context): every byte outside printable ASCII becomes `%XX`, as squid writes most of
 * them already. Nothing is dropped.
 */
export function escapeForDisplay(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => (byte > 0x20 && byte < 0x7f ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

/** `TCP_DENIED…` is an http_access refusal; `NONE…` with a 4xx is a request squid refused before judging it (it could not parse it). */
function decisionOf(code: string, status: number): EgressRecord['decision'] {
  if (code.startsWith('TCP_DENIED') || (code.startsWith('NONE') && status >= 400 && status < 500)) return 'refused';
  return status >= 200 && status < 400 ? 'allowed' : 'failed';
}

/**
 * Pure: one access-log line → a record, or undefined for anything else (squid's own messages).
 * The method and destination come from the agent's request and may hold any byte (squid writes
 * `-:-` for a request it could not parse, `%5B::1%5D:443` for an IPv6 CONNECT, `%`-escapes for
 * odd bytes, and a bare `%` as it came): they are taken whole and escaped, never a reason to drop the line.
 */
export function parseAccessLine(line: string): EgressRecord | undefined {
  const match = /^(\d+\.\d{3}) ([A-Z_]+)\/(\d{3}) (.*) (\S+) (\d+) (\d+)$/s.exec(line.replace(/\r?\n$/, ''));
  if (!match) return undefined;
  const [, time, code, statusText, rawMethod, rawDestination, toClient, fromClient] = match as unknown as string[];
  const status = Number(statusText);
  const method = escapeForDisplay(rawMethod ?? '');
  const destination = escapeForDisplay(rawDestination ?? '');
  const colon = destination.lastIndexOf(':');
  const portText = colon >= 0 ? destination.slice(colon + 1) : '';
  const host = (colon >= 0 && /^(\d{1,5}|-|)$/.test(portText) ? destination.slice(0, colon) : destination) || '-';
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : undefined;
  return {
    time: Math.round(Number(time) * 1000),
    decision: decisionOf(code ?? '', status),
    result: `${code}/${statusText}`,
    method,
    host,
    port,
    destination: port === undefined ? host : `${host}:${port}`,
    bytesIn: Number(toClient),
    bytesOut: Number(fromClient),
  };
}

/** Pure: the line `wait` shows the agent for a refused request. */
export function refusalNotice(record: Pick<EgressRecord, 'destination' | 'method' | 'result'>): string {
  if (record.destination === '-') return `network: refused a request the proxy could not read (${record.method} ..., ${record.result}): send an HTTP request or CONNECT host:port`;
  return `network: refused ${record.destination} (not in this instance's allowlist, or a private address)`;
}
