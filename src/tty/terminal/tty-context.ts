import type { Instance } from '../../config/instance.js';
import { containerView } from '../../config/paths.js';
import type { Logger } from '../../log/logger.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import type { LiveTtys } from './live-ttys.js';
import type { InputWatch } from './input-watch.js';
import type { TerminalHost } from '../host/terminal-host.js';
import type { TtyEventSource } from '../api/tty-events.js';

/** What the TtyManager's parts share: where terminals run, the open ones, settings, events. */
export interface TtyContext {
  readonly instance: Instance;
  readonly sandbox: Sandbox;
  readonly host: TerminalHost;
  readonly logger: Logger;
  readonly config: Instance['config']['tty'];
  readonly paths: Instance['paths'];
  readonly ttys: LiveTtys;
  readonly events: TtyEventSource;
  /** Which terminals' programs wait for input (asked of the sandbox's /proc). */
  readonly inputWatch: InputWatch;
  /** The bash rcfile with shell integration (written at start). */
  readonly rcfile: string;
  /** The tick number, for archive names. */
  tick(): number;
  /** Something happened: a waiting wait() looks again. */
  wake(): void;
  /** Where a terminal's recording of this tick is on the host (set by whoever records them), for elision notes. */
  recordingOf?: ((tty: number) => string | undefined) | undefined;
}

/** A host-private file as the agent sees it: in a container, through the read-only mounts (paths.ts). */
export function agentPath(ctx: Pick<TtyContext, 'sandbox' | 'paths'>, hostPath: string): string {
  return ctx.sandbox.kind === 'host' ? hostPath : containerView(ctx.paths, hostPath);
}
