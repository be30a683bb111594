import { EventEmitter } from 'node:events';
import { KernelError, describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { TmuxControlClient } from './control-client.js';
import type { TypedInput } from './keys.js';
import type { RowsAt, SendOptions, TerminalHost, TerminalHostEvents, TerminalSnapshot, TerminalSpec, TerminalState } from './terminal-host.js';
import { quoteTmuxArgument } from './tmux-escape.js';
import {
  PANE_FORMAT,
  TMUX_ENV,
  TMUX_SESSION,
  type TmuxOptions,
  createSession,
  globalOptionCommands,
  parsePaneLine,
  tmuxArgv,
} from './tmux-server.js';
import { MAX_TTYS } from '../api/types.js';

export interface TmuxHostStart {
  sandbox: Sandbox;
  socket: string;
  version: string;
  /** `has-session` found our session (the terminals survived): attach to it rather than start one. */
  exists: boolean;
  options: TmuxOptions;
  cwd: string;
  logger: Logger;
}

/**
 * The terminals in a tmux server in the sandbox, so that they outlive this process: window
 * N is TTY N, and one control-mode client streams every pane's bytes and takes commands.
 */
export class TmuxHost extends EventEmitter<TerminalHostEvents> implements TerminalHost {
  readonly persistent = true;
  readonly description: string;
  readonly registryFields: Readonly<Record<string, unknown>>;

  private constructor(
    private readonly control: TmuxControlClient,
    readonly socket: string,
    version: string,
  ) {
    super();
    this.description = `${version} on socket ${socket}`;
    this.registryFields = { tmuxSocket: socket };
    control.on('output', (paneId, data) => this.emit('output', paneId, data));
    control.on('exit', (reason) => this.emit('gone', reason));
  }

  /**
   * Attach a control client to our tmux server (started first unless `exists`: the session
   * was there when asked) and set the options.
   */
  static async start(start: TmuxHostStart): Promise<TmuxHost> {
    const { sandbox, socket, options, logger } = start;
    if (!start.exists) await createSession(sandbox, socket, options, start.cwd);
    const proc = await sandbox.spawn(tmuxArgv(socket, '-C', 'attach', '-t', TMUX_SESSION), { env: TMUX_ENV });
    const control = new TmuxControlClient(proc, logger);
    const host = new TmuxHost(control, socket, start.version);
    // One by one (a failing option must not skip the rest), but sent at once: one round trip.
    await Promise.all(
      globalOptionCommands(options).map((command) =>
        control.command(command).catch((error: unknown) => logger.debug({ command, error: describeError(error) }, 'tmux option not set')),
      ),
    );
    return host;
  }

  get closed(): boolean {
    return this.control.closed;
  }

  async terminals(atInstant?: () => void): Promise<TerminalState[]> {
    const [lines = []] = await this.control.commands([`list-panes -s -t ${TMUX_SESSION} -F ${quoteTmuxArgument(PANE_FORMAT)}`], atInstant);
    return lines.map(parsePaneLine).filter((p): p is TerminalState => p !== undefined && p.number < MAX_TTYS);
  }

  /**
   * tmux replies in order with pane output: what it read before a command comes first. But it
   * stops reading every pane while 512 bytes or more wait to go to us (a flood anywhere), so
   * one reply does not mean it has read what a pane holds. Two in a row do: after the first
   * was processed, tmux either read the panes again (their output comes before the second
   * reply) or had nothing left to send us, and then read them before the second arrived.
   */
  async fence(): Promise<void> {
    await this.control.command('display -p .');
    await this.control.command('display -p .');
  }

  async open(spec: TerminalSpec): Promise<string> {
    const window = `${TMUX_SESSION}:${spec.number}`;
    const env = Object.entries(spec.env).map(([key, value]) => `-e ${quoteTmuxArgument(`${key}=${value}`)}`).join(' ');
    const [reply = []] = await this.control.commands([
      `new-window -d -t ${window} -n tty${spec.number} -c ${quoteTmuxArgument(spec.cwd)} ${env} -P -F '#{pane_id}' ${quoteTmuxArgument(spec.shellLine)}`,
      `resize-window -t ${window} -x ${spec.cols} -y ${spec.rows}`,
      drainGuard(window),
    ]);
    const paneId = reply[0]?.trim() ?? '';
    if (!paneId.startsWith('%')) throw new KernelError('TMUX_FAILED', `tmux did not say which pane it opened for TTY ${spec.number} (got "${reply.join(' ')}").`);
    return paneId;
  }

  async send(paneId: string, input: TypedInput, options: SendOptions): Promise<void> {
    const target = `-t ${paneId}`;
    const commands: string[] = [];
    if (input.kind === 'key') {
      commands.push(`send-keys ${target} ${input.key}`);
    } else if (input.kind === 'text') {
      if (input.text) commands.push(`send-keys ${target} -l -- ${quoteTmuxArgument(input.text)}`);
      if (options.enter) commands.push(`send-keys ${target} Enter`);
    } else {
      // tmux brackets the paste (-p) when the program asked for it.
      const buffer = `agent-kernel-${paneId.slice(1)}`;
      commands.push(`set-buffer -b ${buffer} -- ${quoteTmuxArgument(input.text)}`, `paste-buffer -p -d -b ${buffer} ${target}`);
      if (options.enter) commands.push(`send-keys ${target} Enter`);
    }
    if (commands.length > 0) await this.control.commands(commands);
  }

  async resize(_paneId: string, number: number, cols: number, rows: number): Promise<void> {
    await this.control.command(`resize-window -t ${TMUX_SESSION}:${number} -x ${cols} -y ${rows}`);
  }

  async kill(paneId: string): Promise<void> {
    await this.control.command(`kill-window -t ${paneId}`).catch(() => {});
  }

  async rowsFrom(paneId: string, from: number): Promise<string[] | undefined> {
    return this.control.command(`capture-pane -p -e -J -t ${paneId} -S ${from} -E -`).catch(() => undefined);
  }

  async rowsAt(paneId: string, windows: ReadonlyArray<{ from: number; to: number }>): Promise<RowsAt | undefined> {
    const [sizes = []] = await this.control.commands([`display -p -t ${paneId} '#{history_size} #{history_limit} #{pane_height} #{alternate_on}'`]).catch(() => [[]]);
    const [historySize, historyLimit, height, alternate] = (sizes[0] ?? '').split(' ').map(Number);
    if (historySize === undefined || historyLimit === undefined || height === undefined || alternate !== 0) return undefined;
    const inRange = windows.map((w) => w.from >= 0 && w.to >= w.from && w.to < historySize + height);
    const asked = windows.filter((_, i) => inRange[i]);
    const replies = asked.length === 0 ? [] : await this.control.commands(asked.map((w) => `capture-pane -p -t ${paneId} -S ${w.from - historySize} -E ${w.to - historySize}`)).catch(() => undefined);
    if (!replies) return undefined;
    let next = 0;
    return { historySize, historyLimit, windows: windows.map((_, i) => (inRange[i] ? (replies[next++] ?? []) : [])) };
  }

  /**
   * One line, one reply: the pane's numbers and its contents at the same instant. Output up
   * to the reply is in the capture; output after it comes as pane output. For a pane in
   * full-screen mode: history, the saved normal screen, and the alternate screen.
   */
  async snapshot(state: TerminalState, from: number | undefined, atInstant: () => void, options: { plainRows?: boolean } = {}): Promise<TerminalSnapshot> {
    const target = `-t ${state.id}`;
    const start = from === undefined ? '-' : String(from);
    if (!state.dead) await this.control.command(`if-shell -F ${target} ${quoteTmuxArgument('#{pane_pipe}')} '' ${quoteTmuxArgument(drainGuard(state.id))}`).catch(() => {});
    const parts = [`display -p ${target} ${quoteTmuxArgument(PANE_FORMAT)}`];
    if (state.alternateOn) {
      parts.push(`capture-pane -p -e -J ${target} -S ${start} -E -1`, `capture-pane -p -e -a ${target}`, `capture-pane -p -e ${target}`);
    } else {
      parts.push(`capture-pane -p -e -J ${target} -S ${start} -E -`);
    }
    const plain = options.plainRows === true && !state.alternateOn;
    // The whole normal screen and history as plain rows, at the same instant (where rows moved to: relocation.ts).
    if (plain) parts.push(`capture-pane -p ${target} -S - -E -`);
    const replies = await this.control.commands(parts, atInstant);
    const now = parsePaneLine(replies[0]?.[0] ?? '') ?? state;
    const plainRows = plain ? replies.pop() : undefined;
    const [, rows = [], normalScreen = [], screen = []] = replies;
    const snapshot: TerminalSnapshot = now.alternateOn && replies.length === 4 ? { state: now, rows, fullScreen: { normalScreen, screen } } : { state: now, rows };
    if (plainRows && !now.alternateOn) snapshot.plainRows = plainRows;
    return snapshot;
  }

  detach(): void {
    if (!this.control.closed) this.control.close();
  }

  throttle(paused: boolean): void {
    this.control.throttle(paused);
  }
}

/**
 * tmux 3.3 closes a pane whose process ended without reading what is still in its pty, and
 * it pauses reading while a control client is behind: the last output of a command that
 * exits is then lost, in tmux's own screen too. With a pipe-pane attached, tmux waits until
 * the pty is drained before it lets the pane go.
 */
function drainGuard(target: string): string {
  return `pipe-pane -t ${target} ${quoteTmuxArgument('exec cat >/dev/null')}`;
}
