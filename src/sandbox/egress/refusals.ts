import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import type { Instance } from '../../config/instance.js';
import type { Logger } from '../../log/logger.js';
import { proxyContainerName } from './proxy.js';
import { type EgressRecord, parseAccessLine, refusalNotice } from './squid.js';
import type { Engine } from '../engine/engine.js';

/** Refused destinations kept for the agent between two waits; more are counted, not listed. */
const MAX_PENDING = 20;
const RETRY_MS = 1000;

/**
 * Follows the egress proxy's access log (the engine keeps it: host-private, and it survives
 * a server restart) and turns refusals into one-line notices for the next `wait`. The proxy
 * sees every client as the same address, so a notice is not tied to a terminal.
 */
export class EgressRefusals {
  private pending = new Map<string, string>();
  private dropped = 0;
  private stopped = false;
  private stream: NodeJS.ReadableStream | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly since = Date.now();

  constructor(
    private readonly engine: Engine,
    private readonly instance: Instance,
    private readonly logger: Logger,
    private readonly onRecord?: (record: EgressRecord) => void,
  ) {}

  /** Start following; a no-op unless the instance's policy is allowlist. */
  start(): this {
    if (this.instance.config.container.network === 'allowlist') void this.follow();
    return this;
  }

  private async follow(): Promise<void> {
    if (this.stopped) return;
    try {
      const container = this.engine.docker.getContainer(proxyContainerName(this.instance.name));
      const raw = (await container.logs({ follow: true, stdout: true, stderr: false, since: Math.floor(this.since / 1000) })) as unknown as NodeJS.ReadableStream;
      if (this.stopped) {
        (raw as unknown as { destroy?: () => void }).destroy?.();
        return;
      }
      this.stream = raw;
      const stdout = new PassThrough();
      this.engine.docker.modem.demuxStream(raw, stdout, new PassThrough());
      raw.on('end', () => stdout.end());
      const lines = createInterface({ input: stdout });
      lines.on('line', (line) => this.take(line));
      await new Promise<void>((resolve) => {
        raw.once('end', resolve);
        raw.once('close', resolve);
        raw.once('error', resolve);
      });
    } catch (error) {
      this.logger.debug({ err: error }, 'egress log not readable yet');
    }
    // The proxy was recreated or is not up yet: follow again shortly.
    if (!this.stopped) this.timer = setTimeout(() => void this.follow(), RETRY_MS);
  }

  private take(line: string): void {
    const record = parseAccessLine(line);
    if (!record || record.time < this.since - 1000) return;
    this.onRecord?.(record);
    if (record.decision !== 'refused') return;
    const key = record.destination;
    if (this.pending.has(key)) return;
    if (this.pending.size >= MAX_PENDING) this.dropped += 1;
    else this.pending.set(key, refusalNotice(record));
  }

  /** The notices since the last call, each refused destination once. */
  takeNotices(): string[] {
    const notices = [...this.pending.values()];
    if (this.dropped > 0) notices.push(`network: ${this.dropped} more refused destinations (agent-kernel egress log ${this.instance.name} shows them)`);
    this.pending.clear();
    this.dropped = 0;
    return notices;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    (this.stream as unknown as { destroy?: () => void } | undefined)?.destroy?.();
  }
}
