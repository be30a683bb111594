import type { Instance } from '../../config/instance.js';
import { CodedError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { PtyHost } from './pty-host.js';
import type { TerminalHost } from './terminal-host.js';
import { TmuxHost } from './tmux-host.js';
import { sessionExists, tmuxSocketName, tmuxVersion } from './tmux-server.js';

export interface HostChoice {
  instance: Instance;
  sandbox: Sandbox;
  logger: Logger;
  /** false: on the host backend, use PTYs even where tmux is installed (the CLI maps AGENT_KERNEL_HOST_TMUX=0 to it). */
  hostTmux?: boolean;
  /**
   * Read the panes' output through pipe frames (pane-reader.ts) rather than control mode: off by
   * default until the whole terminal test set passes with it; AGENT_KERNEL_PANE_FRAMES=1 turns it on.
   */
  paneFrames?: boolean;
}

/**
 * tmux in the sandbox; on the host backend without tmux (or with hostTmux false), PTYs of
 * this process, which end with it.
 */
export async function startTerminalHost({ instance, sandbox, logger, hostTmux = true, paneFrames = paneFramesAsked() }: HostChoice): Promise<TerminalHost> {
  const onHost = sandbox.kind === 'host';
  const socket = tmuxSocketName(sandbox, instance.name);
  // Both questions at once: each is an exec, about 60 ms into a container.
  const [version, exists] = onHost && !hostTmux ? [undefined, false] : await Promise.all([tmuxVersion(sandbox), sessionExists(sandbox, socket).catch(() => false)]);
  if (!version && onHost) {
    logger.warn({ reason: hostTmux ? 'tmux not found' : 'AGENT_KERNEL_HOST_TMUX=0' }, 'terminals run as PTYs of the server: they end when it ends');
    return PtyHost.start();
  }
  if (!version) {
    throw new CodedError('TMUX_FAILED', `tmux is not installed in ${sandbox.description}. Add tmux to the image (apt-get install tmux) and start again.`);
  }
  const { history_limit: historyLimit, cols, rows } = instance.config.tty;
  return TmuxHost.start({ sandbox, socket, version, exists, options: { historyLimit, cols, rows }, cwd: instance.dataDir, logger, paneFrames });
}

function paneFramesAsked(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.AGENT_KERNEL_PANE_FRAMES === '1';
}
