import { EventEmitter } from 'node:events';
import { CodedError, describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { TmuxControlClient } from './control-client.js';
import { PaneReader } from './pane-reader.js';
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
import { sleep } from '../../util/sleep.js';

export interface TmuxHostStart {
  sandbox: Sandbox;
  socket: string;
  version: string;
  /** `has-session` found our session (the terminals survived): attach to it rather than start one. */
  exists: boolean;
  options: TmuxOptions;
  cwd: string;
  logger: Logger;
  /** Read the panes' bytes through `pipe-pane` frames (pane-reader.ts) instead of control mode's `%output`. */
  paneFrames?: boolean;
}

/**
 * The terminals in a tmux server in the sandbox, so that they outlive this process: window
 * N is TTY N, and one control-mode client streams every pane's bytes and takes commands.
 * With a PaneReader, the bytes come through each pane's pipe instead, at tmux's own speed, and
 * control mode sends none of our panes' output (each is paused on it, `refresh-client -A %N:pause`):
 * it keeps the commands, the layout and the probes.
 */
export class TmuxHost extends EventEmitter<TerminalHostEvents> implements TerminalHost {
  readonly persistent = true;
  readonly description: string;
  readonly registryFields: Readonly<Record<string, unknown>>;

  private constructor(
    private readonly control: TmuxControlClient,
    readonly socket: string,
    version: string,
    private readonly sandbox: Sandbox,
    private readonly reader: PaneReader | undefined,
  ) {
    super();
    this.description = `${version} on socket ${socket}${reader ? ', output through pane pipes' : ''}`;
    this.registryFields = { tmuxSocket: socket };
    if (reader) {
      reader.on('output', (paneId, data) => this.emit('output', paneId, data));
      reader.on('broken', (reason) => this.emit('gone', `${reason}; the terminals are started again, their output read anew from tmux`));
    } else {
      control.on('output', (paneId, data) => this.emit('output', paneId, data));
    }
    control.on('exit', (reason) => this.emit('gone', reason));
    if (reader) this.catchUp = (states) => this.fencePipes(reader, states);
  }

  /** The terminals as last listed: the fence writes to their devices (one opened since is fenced from the next listing on). */
  private lastStates: readonly TerminalState[] = [];

  /** With pane pipes: resolves once every byte these terminals had written when listed has been emitted. */
  readonly catchUp?: (states: readonly TerminalState[]) => Promise<void>;

  /**
   * Attach a control client to our tmux server (started first unless `exists`: the session
   * was there when asked) and set the options.
   */
  static async start(start: TmuxHostStart): Promise<TmuxHost> {
    const { sandbox, socket, logger } = start;
    if (!start.exists) await createSession(sandbox, socket, start.options, start.cwd);
    const proc = await sandbox.spawn(tmuxArgv(socket, '-C', 'attach', '-t', TMUX_SESSION), { env: TMUX_ENV });
    const control = new TmuxControlClient(proc, logger);
    let reader: PaneReader | undefined;
    try {
      // One by one (a failing option must not skip the rest), but sent at once: one round trip.
      const options = Promise.all(
        globalOptionCommands(start.options).map((command) =>
          control.command(command).catch((error: unknown) => logger.debug({ command, error: describeError(error) }, 'tmux option not set')),
        ),
      );
      if (start.paneFrames) [reader] = await Promise.all([PaneReader.start(sandbox, socket, logger), pauseEveryPane(control), options]);
      else await options;
    } catch (error) {
      control.close();
      reader?.close();
      throw error;
    }
    return new TmuxHost(control, socket, start.version, sandbox, reader);
  }

  get closed(): boolean {
    return this.control.closed;
  }

  /**
   * With pane pipes, `atInstant` runs when tmux answers, and the emulators may still lack what tmux
   * read just before (the bytes on their way through the pipe): they are behind, never ahead.
   */
  async terminals(atInstant?: () => void): Promise<TerminalState[]> {
    const list = `list-panes -s -t ${TMUX_SESSION} -F ${quoteTmuxArgument(PANE_FORMAT)}`;
    const [lines = [], pipes = []] = await this.control.commands(this.reader ? [list, `list-panes -s -t ${TMUX_SESSION} -F '#{pane_id} #{pane_pipe} #{pane_dead}'`] : [list], atInstant);
    const states = lines.map(parsePaneLine).filter((p): p is TerminalState => p !== undefined && p.number < MAX_TTYS);
    if (this.reader) {
      this.checkPipes(this.reader, pipes);
      this.lastStates = states;
    }
    return states;
  }

  /** A live pane of ours whose pipe closed: its framer ended (the agent can end it), and its bytes go nowhere. */
  private checkPipes(reader: PaneReader, pipes: readonly string[]): void {
    for (const line of pipes) {
      const [id = '', pipe, dead] = line.split(' ');
      if (pipe === '0' && dead === '0' && reader.follows(id) && !reader.broken) {
        reader.close();
        this.emit('gone', `the output pipe of pane ${id} closed (its framer in the container ended); the terminals are started again, their output read anew from tmux`);
        return;
      }
    }
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
    if (this.reader) await this.fencePipes(this.reader);
  }

  /**
   * tmux exposes no byte count of a pane, so a reply cannot be placed in a pipe's stream; but what
   * is written to a pane's terminal comes out of its pipe in order: a marker (an OSC that tmux and
   * the emulators ignore) written to each live pane's terminal now arrives after every byte before it.
   */
  private async fencePipes(reader: PaneReader, states?: readonly TerminalState[]): Promise<void> {
    const live = (states ?? this.lastStates).filter((t) => !t.dead && reader.follows(t.id));
    await Promise.all(live.map((t) => reader.fence(t.id, t.device)));
  }

  async open(spec: TerminalSpec): Promise<string> {
    const window = `${TMUX_SESSION}:${spec.number}`;
    const env = Object.entries(spec.env).map(([key, value]) => `-e ${quoteTmuxArgument(`${key}=${value}`)}`).join(' ');
    // In one group: the pipe is there before tmux first reads the pane.
    const pipe = this.reader?.openPipe(window);
    if (pipe) this.reader?.expect(pipe.pipe);
    const [reply = []] = await this.control
      .commands([
        `new-window -d -t ${window} -n tty${spec.number} -c ${quoteTmuxArgument(spec.cwd)} ${env} -P -F '#{pane_id}' ${quoteTmuxArgument(spec.shellLine)}`,
        `resize-window -t ${window} -x ${spec.cols} -y ${spec.rows}`,
        pipe?.command ?? drainGuard(window),
      ])
      .catch((error: unknown) => {
        if (pipe) this.reader?.unexpect(pipe.pipe);
        throw error;
      });
    const paneId = reply[0]?.trim() ?? '';
    if (!paneId.startsWith('%')) throw new CodedError('TMUX_FAILED', `tmux did not say which pane it opened for TTY ${spec.number} (got "${reply.join(' ')}").`);
    // Its first frame may have named it already.
    if (pipe && this.reader && !this.reader.follows(paneId)) this.reader.follow(paneId, pipe.pipe);
    // Control mode sends its output until told not to; while throttled, it must (throttle pauses it after).
    if (pipe && !this.throttled) await this.control.command(paneOutput(paneId, false)).catch(() => {});
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

  async sendBytes(paneId: string, data: Buffer): Promise<void> {
    // Byte for byte (-H), so Enter, Ctrl-C and arrow keys arrive as typed; a few hundred bytes a command.
    const commands: string[] = [];
    for (let at = 0; at < data.length; at += 256) {
      commands.push(`send-keys -t ${paneId} -H ${[...data.subarray(at, at + 256)].map((b) => b.toString(16).padStart(2, '0')).join(' ')}`);
    }
    if (commands.length > 0) await this.control.commands(commands);
  }

  async resize(_paneId: string, number: number, cols: number, rows: number): Promise<void> {
    await this.control.command(`resize-window -t ${TMUX_SESSION}:${number} -x ${cols} -y ${rows}`);
  }

  async kill(paneId: string): Promise<void> {
    await this.control.command(`kill-window -t ${paneId}`).catch(() => {});
    this.reader?.forget(paneId);
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
    if (!state.dead && !this.reader) await this.control.command(`if-shell -F ${target} ${quoteTmuxArgument('#{pane_pipe}')} '' ${quoteTmuxArgument(drainGuard(state.id))}`).catch(() => {});
    const parts = [`display -p ${target} ${quoteTmuxArgument(PANE_FORMAT)}`];
    if (state.alternateOn) {
      parts.push(`capture-pane -p -e -J ${target} -S ${start} -E -1`, `capture-pane -p -e -a ${target}`, `capture-pane -p -e ${target}`);
    } else {
      parts.push(`capture-pane -p -e -J ${target} -S ${start} -E -`);
    }
    const plain = options.plainRows === true && !state.alternateOn;
    // The whole normal screen and history as plain rows, at the same instant (where rows moved to: relocation.ts).
    if (plain) parts.push(`capture-pane -p ${target} -S - -E -`);
    // With pane pipes, the instant is the new pipe's start: it replaces the pane's pipe (tmux drops
    // what the old one still held, which is in these captures) in the same group, so its bytes are
    // exactly those after the captures, and may arrive before the reply.
    const pipe = state.dead ? undefined : this.reader?.openPipe(state.id);
    if (pipe && this.reader) {
      this.reader.follow(state.id, pipe.pipe);
      atInstant();
    }
    const replies = await this.control.commands(pipe ? [...parts, pipe.command] : parts, pipe ? undefined : atInstant);
    if (pipe) replies.pop();
    const now = parsePaneLine(replies[0]?.[0] ?? '') ?? state;
    const plainRows = plain ? replies.pop() : undefined;
    const [, rows = [], normalScreen = [], screen = []] = replies;
    const snapshot: TerminalSnapshot = now.alternateOn && replies.length === 4 ? { state: now, rows, fullScreen: { normalScreen, screen } } : { state: now, rows };
    if (plainRows && !now.alternateOn) snapshot.plainRows = plainRows;
    return snapshot;
  }

  detach(): void {
    this.reader?.close();
    if (!this.control.closed) this.control.close();
  }

  /** While throttled, control mode sends our panes' output again (pane pipes only). */
  private throttled = false;

  /**
   * With pane pipes, tmux never waits on a pipe (it holds what a pipe has not taken in its memory):
   * while paused, control mode sends our panes' output again and is not read, and tmux stops reading
   * every pane as soon as 512 bytes wait for it, as without pipes; the FIFO is not read either, so
   * that a reader that forges frames waits too. Per pane (`refresh-client -A %N:continue|pause`),
   * never the client's `no-output` flag: tmux 3.3a keeps the output it had queued for the client
   * when that flag is set again, and every reply after it waits behind that output for good (the
   * control client hangs: tmux/tmux#5049, fixed upstream in 2026, not in 3.3a). A pause drops it.
   */
  throttle(paused: boolean): void {
    if (this.reader && paused !== this.throttled) {
      this.throttled = paused;
      const panes = this.reader.followed();
      if (paused && panes.length > 0) this.control.commands(panes.map((id) => paneOutput(id, true))).catch(() => {});
      this.control.throttle(paused);
      this.reader.throttle(paused);
      if (!paused && panes.length > 0) this.control.commands(panes.map((id) => paneOutput(id, false))).catch(() => {});
      return;
    }
    this.control.throttle(paused);
    this.reader?.throttle(paused);
  }
}

/** Does control mode send `paneId`'s output to us (on: `continue`) or not (`pause`: tmux drops what it queued)? */
function paneOutput(paneId: string, on: boolean): string {
  return `refresh-client -A ${quoteTmuxArgument(`${paneId}:${on ? 'continue' : 'pause'}`)}`;
}

/**
 * Control mode sends none of the panes' output from now on (each is paused on this client; one
 * opened later is paused by open()): tmux never waits on it to read a pane. A command that reaches
 * tmux before the client has attached finds "no current client": asked again then.
 */
async function pauseEveryPane(control: TmuxControlClient): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const [panes = []] = await control.commands([`list-panes -s -t ${TMUX_SESSION} -F '#{pane_id}'`]);
      const ids = panes.filter((id) => /^%\d+$/.test(id));
      await control.commands(ids.length > 0 ? ids.map((id) => paneOutput(id, false)) : ['refresh-client -A %0:pause']);
      return;
    } catch (error) {
      if (attempt >= 20 || !/no current client/.test(describeError(error))) throw error;
      await sleep(50);
    }
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
