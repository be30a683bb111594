import { CodedError } from '../../errors.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import type { TerminalState } from './terminal-host.js';

/** The tmux session that holds the agent's terminals; window N is TTY N. */
export const TMUX_SESSION = 'kernel';
/** A hidden window so the session outlives the agent's last terminal. */
export const KEEPER_WINDOW = 99;

/**
 * The tmux socket (`tmux -L <name>`): `agent-kernel` inside a container (one instance per
 * container); on the host several instances share one machine, so the name carries the instance.
 */
export function tmuxSocketName(sandbox: Pick<Sandbox, 'kind'>, instanceName: string): string {
  return sandbox.kind === 'host' ? `agent-kernel-${instanceName}` : 'agent-kernel';
}

/** Every tmux we run: on our socket, never inside the caller's own tmux, without the user's ~/.tmux.conf. */
export function tmuxArgv(socket: string, ...args: string[]): string[] {
  return ['tmux', '-L', socket, '-f', '/dev/null', ...args];
}

export const TMUX_ENV = { TMUX: '' } as const;

export interface TmuxOptions {
  historyLimit: number;
  cols: number;
  rows: number;
}

/** Options set at every start (idempotent). `window-size manual` is not set: tmux 3.3a crashes on new-window with it; resize-window makes each window manual instead. */
export function globalOptionCommands(options: TmuxOptions): string[] {
  return [
    `set -g history-limit ${options.historyLimit}`,
    'set -g status off',
    'set -g remain-on-exit on',
    `set -g default-size ${options.cols}x${options.rows}`,
    'set -g default-terminal xterm-256color',
    'set -g allow-rename off',
    'set -g exit-empty off',
    'set -g destroy-unattached off',
    'set -g scroll-on-clear on',
    // tmux 3.3 writes "Pane is dead..." into a dead pane's screen unless this is empty (last: older tmux lacks it).
    "set -g remain-on-exit-format ''",
  ];
}

/** Is tmux there at all? */
export async function tmuxVersion(sandbox: Sandbox): Promise<string | undefined> {
  const result = await sandbox.run(['tmux', '-V'], { timeoutMs: 10_000 }).catch(() => undefined);
  return result && result.exitCode === 0 ? result.stdout.trim() : undefined;
}

/** Does our session exist (the terminals survived)? */
export async function sessionExists(sandbox: Sandbox, socket: string): Promise<boolean> {
  const result = await sandbox.run(tmuxArgv(socket, 'has-session', '-t', TMUX_SESSION), { env: TMUX_ENV, timeoutMs: 10_000 });
  return result.exitCode === 0;
}

/** Start the tmux server with our session and its keeper window. */
export async function createSession(sandbox: Sandbox, socket: string, options: TmuxOptions, cwd: string): Promise<void> {
  const keeper = "sh -c 'while :; do sleep 86400; done'";
  const argv = tmuxArgv(
    socket,
    'new-session', '-d', '-s', TMUX_SESSION, '-n', 'keeper', '-c', cwd,
    '-x', String(options.cols), '-y', String(options.rows), keeper,
    ';', 'move-window', '-s', `${TMUX_SESSION}:0`, '-t', `${TMUX_SESSION}:${KEEPER_WINDOW}`,
  );
  for (const command of globalOptionCommands(options)) argv.push(';', ...command.replace(" ''", ' ').split(' ').filter(Boolean), ...(command.endsWith("''") ? [''] : []));
  const result = await sandbox.run(argv, { env: TMUX_ENV, timeoutMs: 20_000 });
  if (result.exitCode !== 0 && !(await sessionExists(sandbox, socket))) {
    throw new CodedError('TMUX_FAILED', `Could not start tmux (${sandbox.description}): ${result.stderr.trim() || `exit ${result.exitCode}`}`, {
      details: { stderr: result.stderr, exitCode: result.exitCode },
    });
  }
}

const SEP = '\u001f';
export const PANE_FORMAT = [
  '#{window_index}', '#{pane_id}', '#{pane_pid}', '#{pane_dead}', '#{pane_dead_status}', '#{history_size}',
  '#{cursor_x}', '#{cursor_y}', '#{alternate_on}', '#{alternate_saved_x}', '#{alternate_saved_y}',
  // The title is the agent's to set: only the characters of the shell's own title (SHELL_TITLE_PREFIX) are kept.
  '#{pane_width}', '#{pane_height}', '#{pane_tty}', '#{=64:#{s/[^0-9a-z-]//:pane_title}}', '#{pane_current_command}',
].join('|');

/** One line of `list-panes -F PANE_FORMAT`, as a terminal's state. */
export function parsePaneLine(line: string): TerminalState | undefined {
  const f = line.split(line.includes(SEP) ? SEP : '|');
  if (f.length < 16) return undefined;
  const int = (s: string | undefined) => Number.parseInt(s ?? '', 10) || 0;
  return {
    number: int(f[0]),
    id: f[1] ?? '',
    pid: int(f[2]),
    dead: f[3] === '1',
    exitStatus: f[4] === '' || f[4] === undefined ? undefined : int(f[4]),
    historySize: int(f[5]),
    cursorX: int(f[6]),
    cursorY: int(f[7]),
    alternateOn: f[8] === '1',
    alternateSavedX: int(f[9]),
    alternateSavedY: int(f[10]),
    cols: int(f[11]),
    rows: int(f[12]),
    device: f[13] ?? '',
    title: f[14] ?? '',
    command: f.slice(15).join('|'),
  };
}
