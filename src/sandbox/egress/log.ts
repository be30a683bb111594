import type { Instance } from '../../config/instance.js';
import { CodedError, describeError } from '../../errors.js';
import { proxyContainerName } from './proxy.js';
import { type EgressRecord, parseAccessLine } from './squid.js';
import { type Engine, statusCode } from '../engine/engine.js';

/**
 * The operator's view of an instance's egress: every connection the proxy handled, from the
 * log the engine keeps for the proxy container (host-private; rotated at 3 × 10 MB).
 */

/** Non-TTY container logs come in frames with 8-byte headers; keep stdout's. */
function stdoutOf(buffer: Buffer): string {
  const parts: Buffer[] = [];
  for (let offset = 0; offset + 8 <= buffer.length; ) {
    const size = buffer.readUInt32BE(offset + 4);
    if (buffer[offset] === 1) parts.push(buffer.subarray(offset + 8, offset + 8 + size));
    offset += 8 + size;
  }
  return Buffer.concat(parts).toString('utf8');
}

/** The last `tail` connections (oldest first). */
export async function readEgressLog(engine: Engine, instance: Instance, tail = 10_000): Promise<EgressRecord[]> {
  const name = proxyContainerName(instance.name);
  let logs: Buffer;
  try {
    const raw = await engine.docker.getContainer(name).logs({ stdout: true, stderr: false, follow: false, tail });
    logs = Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw));
  } catch (error) {
    if (statusCode(error) === 404) {
      throw new CodedError(
        'CONTAINER_FAILED',
        instance.config.container.network === 'allowlist'
          ? `${instance.name} has no egress proxy yet: it starts with the container (agent-kernel container up ${instance.name}).`
          : `${instance.name}'s network policy is ${instance.config.container.network}, which has no proxy and no egress log; container.network "allowlist" has both.`,
      );
    }
    throw new CodedError('CONTAINER_FAILED', `Cannot read the log of ${name}: ${describeError(error)}`, { cause: error });
  }
  return stdoutOf(logs)
    .split('\n')
    .map(parseAccessLine)
    .filter((r): r is EgressRecord => r !== undefined);
}

/**
 * Pure: one line per connection, for people. Bytes are the agent's: what it sent (the request)
 * and what it received (the reply, or the proxy's own error page for a refusal); a header names them.
 */
export function formatRecords(records: readonly EgressRecord[]): string {
  if (records.length === 0) return 'No connections yet.';
  const row = (time: string, decision: string, method: string, destination: string, sent: string, received: string, result: string): string =>
    `${time.padEnd(24)}  ${decision.padEnd(8)} ${method.padEnd(7)} ${destination.padEnd(40)} ${sent.padStart(10)} ${received.padStart(12)}  ${result}`;
  return [
    row('time', 'decision', 'method', 'destination', 'agent sent', 'and received', 'squid'),
    ...records.map((r) => row(new Date(r.time).toISOString(), r.decision, r.method, r.destination, `${r.bytesOut} B`, `${r.bytesIn} B`, r.result)),
  ].join('\n');
}

export interface RefusedDestination {
  destination: string;
  count: number;
  last: number;
}

/** Pure: refused destinations, most refused first. */
export function topRefused(records: readonly EgressRecord[], limit = 20): RefusedDestination[] {
  const byDestination = new Map<string, RefusedDestination>();
  for (const r of records) {
    if (r.decision !== 'refused') continue;
    const destination = r.destination;
    const entry = byDestination.get(destination) ?? { destination, count: 0, last: 0 };
    entry.count += 1;
    entry.last = Math.max(entry.last, r.time);
    byDestination.set(destination, entry);
  }
  return [...byDestination.values()].sort((a, b) => b.count - a.count || b.last - a.last).slice(0, limit);
}
