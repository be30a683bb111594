import { containerName } from '../../sandbox/container/container.js';
import { engineCandidates } from '../../sandbox/engine/engine.js';
import { TMUX_SESSION, tmuxSocketName } from './tmux-server.js';

export interface TmuxTarget {
  backend: 'docker' | 'host';
  instanceName: string;
  /** user[:group] the terminals run as (tmux sockets are per user). */
  user?: string;
}

/**
 * Pure: a tmux command on the kernel's socket, run where the terminals are: inside the
 * container through `docker exec` (with `-it` when a person's terminal is attached), or
 * directly for the host backend.
 */
export function tmuxCommandArgv(target: TmuxTarget, tmuxArgs: readonly string[], interactive: boolean): string[] {
  const tmux = ['tmux', '-L', tmuxSocketName({ kind: target.backend }, target.instanceName), ...tmuxArgs];
  if (target.backend === 'host') return ['env', '-u', 'TMUX', ...tmux];
  return [
    'docker',
    'exec',
    ...(interactive ? ['-it', '-e', 'TERM=xterm-256color'] : []),
    ...(target.user ? ['-u', target.user] : []),
    containerName(target.instanceName),
    ...tmux,
  ];
}

/** Pure: attach a person's terminal to TTY `tty`, read-only unless `write`. */
export function attachArgv(target: TmuxTarget, tty: number, write: boolean): string[] {
  return tmuxCommandArgv(target, ['attach', ...(write ? [] : ['-r']), '-t', `${TMUX_SESSION}:${tty}`], true);
}

/** Pure: list the window numbers (TTYs) of the kernel's tmux session. */
export function listWindowsArgv(target: TmuxTarget): string[] {
  return tmuxCommandArgv(target, ['list-windows', '-t', TMUX_SESSION, '-F', '#{window_index}'], false);
}

/** DOCKER_HOST for the docker CLI from the config's engine (a name or an address); undefined: the CLI's own default. */
export function dockerHostFor(engine: string | undefined): string | undefined {
  if (engine === undefined) return undefined;
  return engineCandidates(engine)[0];
}
