import { EventEmitter } from 'node:events';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Instance } from '../config/instance.js';
import { containerView } from '../config/paths.js';
import { KernelError, describeError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { renderNewOutput, renderScreen } from '../observe/render-new-output.js';
import { type TtyState, loadSeenState, saveSeenState } from '../observe/seen-store.js';
import { TtyFiles, keepLostScrollback } from '../observe/tty-files.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { judgeCompletion, parseReadingKeys } from './completion.js';
import { INTERRUPT_KEYS, parseTypedText } from './keys.js';
import { isShell, normalizeProgram, programMatches } from './program-name.js';
import { type ServerLock, acquireServerLock } from './server-lock.js';
import { bashRcfilePath, commandLine, integratedShellCommand, writeBashRcfile } from './shell-integration.js';
import { PtyHost } from './pty-host.js';
import type { TerminalHost } from './terminal-host.js';
import { TmuxHost } from './tmux-host.js';
import { type PaneInfo, parsePaneLine, tmuxSocketName, tmuxVersion } from './tmux-server.js';
import { Tty } from './tty.js';
import { EMULATOR_SCROLLBACK } from './tty-emulator.js';
import {
  type AdoptReport,
  type Capacity,
  type CloseResult,
  type LostTty,
  MAX_TTYS,
  MAX_WAIT_SECONDS,
  type OpenResult,
  type TtyInfo,
  type TtyReport,
  type TypeInput,
  type TypeResult,
  type WaitReason,
  type WaitResult,
} from './types.js';

export interface OpenOptions {
  /** Run this shell command line instead of the integrated bash. */
  command?: string;
  /** This number instead of the lowest free one. */
  tty?: number;
  /** The working directory inside the sandbox (default: the data directory). */
  cwd?: string;
}

export interface TtyManagerStartOptions {
  instance: Instance;
  sandbox: Sandbox;
  logger: Logger;
  /** The tick number, for archive names (`tty_N-tick-NNN`). */
  tick?: number;
}

/** How long wait() gives a type() that was called at the same time to arrive. */
const IDLE_GRACE_MS = 400;
/** How often wait() asks tmux about the panes (foreground program, exit). */
const POLL_MS = 100;
const DEFAULT_WAIT_SECONDS = 30;
/** How long a dead pane may lack its exit status before it is reported without one. */
const DEAD_STATUS_GRACE_MS = 2000;
/** How long a new integrated shell may take to show its first prompt before silence counts. */
const FIRST_PROMPT_MS = 10_000;

/**
 * The agent's terminals on one instance. A TerminalHost holds their processes: one tmux
 * server in the sandbox (so they outlive this process; one control-mode client streams
 * every pane's bytes), or, on the host backend without tmux, PTYs of this process. Each
 * terminal's bytes feed one headless emulator; what the agent has seen is tracked per
 * terminal and persisted. Safe for concurrent calls: open, type and close run one at a
 * time; wait may run beside them.
 */
export class TtyManager {
  adoptReport: AdoptReport = { adopted: [], lost: [], persistent: true };
  private readonly ttys = new Map<number, Tty>();
  private readonly byPane = new Map<string, Tty>();
  /** Output of panes not registered yet (a window that is being opened). */
  private readonly orphanOutput = new Map<string, Buffer[]>();
  private readonly activity = new EventEmitter();
  private host!: TerminalHost;
  private rcfile = '';
  private serial: Promise<unknown> = Promise.resolve();
  private stateTimer: NodeJS.Timeout | undefined;
  private isDisposed = false;
  private tick: number;
  private readonly paths: Instance['paths'];
  private readonly config: Instance['config']['tty'];
  private tmuxGone: string | undefined;

  private constructor(
    private readonly instance: Instance,
    private readonly sandbox: Sandbox,
    private readonly logger: Logger,
    private readonly lock: ServerLock,
    tick: number,
  ) {
    this.tick = tick;
    this.paths = instance.paths;
    this.config = instance.config.tty;
    this.activity.setMaxListeners(0);
  }

  /** Take the instance's lock, start or find tmux (or PTYs: see startHost), and re-adopt the terminals that are still alive. */
  static async start(options: TtyManagerStartOptions): Promise<TtyManager> {
    const lock = await acquireServerLock(options.instance.paths.serverLock);
    const manager = new TtyManager(options.instance, options.sandbox, options.logger.child({ component: 'tty' }), lock, options.tick ?? 0);
    try {
      await manager.init();
      return manager;
    } catch (error) {
      await manager.dispose().catch(() => {});
      throw error;
    }
  }

  /** True once dispose() was called. */
  get disposed(): boolean {
    return this.isDisposed;
  }

  setTick(tick: number): void {
    this.tick = tick;
  }

  // ---------------------------------------------------------------- start and adoption

  private async init(): Promise<void> {
    // Written host-private; a container sees it through the read-only mount at <data>/tmp/kernel.
    const rcfile = await writeBashRcfile(this.paths.shell);
    this.rcfile = this.sandbox.kind === 'host' ? rcfile : bashRcfilePath(this.paths.shownShell);
    const saved = await loadSeenState(this.paths.kernelState);
    this.host = await this.startHost();
    this.host.on('output', (paneId, data) => this.onPaneOutput(paneId, data));
    this.host.on('gone', (reason) => {
      if (!this.isDisposed) {
        this.tmuxGone = reason;
        this.logger.error({ reason }, 'tmux control client ended');
        this.wake();
      }
    });

    const panes = await this.listPanes();
    const lost: LostTty[] = [];
    const adopted: number[] = [];
    const adopting: Array<Promise<void>> = [];
    for (const state of saved.ttys) {
      const pane = panes.find((p) => p.window === state.tty && p.paneId === state.paneId);
      if (!pane) {
        lost.push(await this.recordLost(state));
        continue;
      }
      adopting.push(this.adopt(state, pane));
      adopted.push(state.tty);
    }
    // Windows tmux has that the state does not know (a server killed between new-window and saving).
    for (const pane of panes) {
      if (pane.window >= MAX_TTYS || adopted.includes(pane.window)) continue;
      adopting.push(this.adopt(undefined, pane));
      adopted.push(pane.window);
    }
    // All at once: the tmux round trips overlap, and so does the emulators' parsing.
    await Promise.all(adopting);
    this.adoptReport = { adopted: adopted.sort((a, b) => a - b), lost, persistent: this.host.persistent };
    await this.saveState();
    await this.writeRegistry();
    this.logger.info({ adopted, lost: lost.map((l) => l.tty), host: this.host.description, sandbox: this.sandbox.description }, 'terminals ready');
  }

  /**
   * tmux in the sandbox; on the host backend without tmux (or with AGENT_KERNEL_HOST_TMUX=0),
   * PTYs of this process, which end with it.
   */
  private async startHost(): Promise<TerminalHost> {
    const forcedOff = process.env.AGENT_KERNEL_HOST_TMUX === '0';
    const version = forcedOff && this.sandbox.kind === 'host' ? undefined : await tmuxVersion(this.sandbox);
    if (!version && this.sandbox.kind === 'host') {
      this.logger.warn({ reason: forcedOff ? 'AGENT_KERNEL_HOST_TMUX=0' : 'tmux not found' }, 'terminals run as PTYs of the server: they end when it ends');
      return PtyHost.start();
    }
    if (!version) {
      throw new KernelError(
        'TMUX_FAILED',
        `tmux is not installed in ${this.sandbox.description}. Add tmux to the image (apt-get install tmux) and start again.`,
      );
    }
    const options = { historyLimit: this.config.history_limit, cols: this.config.cols, rows: this.config.rows };
    return TmuxHost.start(this.sandbox, tmuxSocketName(this.sandbox, this.instance.name), version, options, this.instance.dataDir, this.logger);
  }

  private async recordLost(state: TtyState): Promise<LostTty> {
    const scrollbackPrev = await keepLostScrollback(this.paths.tty(state.tty));
    this.logger.warn({ tty: state.tty }, 'terminal lost (its tmux is gone)');
    return { tty: state.tty, command: state.command, scrollbackPrev: this.agentPath(scrollbackPrev) };
  }

  /** Re-attach a live terminal: seed an emulator from tmux's history and work out what the agent has not seen. */
  private async adopt(state: TtyState | undefined, pane: PaneInfo): Promise<void> {
    const number = pane.window;
    // Only the rows still needed: what the agent has not seen, what the scrollback file lacks,
    // and what the emulator keeps anyway. Older history stays in tmux and in the file.
    const wanted = Math.max(0, Math.min(state?.markRow ?? 0, state?.scrollbackRows ?? 0, pane.historySize - EMULATOR_SCROLLBACK));
    const from = wanted === 0 ? undefined : wanted - pane.historySize;
    const start = from === undefined ? '-' : String(from);
    // Output up to the reply is in the capture; output after it is kept and replayed at register().
    const replies = await this.host.capture(pane, start, () => this.orphanOutput.delete(pane.paneId));
    const now = parsePaneLine(replies[0]?.[0] ?? '') ?? pane;
    const markRow = state ? (now.historySize < state.markHistory ? 0 : state.markRow) : 0;
    const tty = this.createTty(number, state?.command ?? '(adopted)', pane.paneId, state?.openedAt ?? new Date().toISOString(), {
      cols: now.width,
      rows: now.height,
    }, markRow);
    tty.files = await this.openFiles(tty, state?.scrollbackRows ?? 0);

    const emulator = tty.emulator;
    // The first captured row, in tmux's numbering (the display above ran at the same instant).
    emulator.setTotalScrolls(from === undefined ? 0 : Math.max(0, now.historySize + from));
    if (now.alternateOn && replies.length === 4) {
      const [, history = [], saved = [], screen = []] = replies;
      emulator.write([...history, ...padRows(saved, now.height)].join('\r\n'));
      emulator.write(`\x1b[${now.alternateSavedY + 1};${now.alternateSavedX + 1}H\x1b[?1049h\x1b[H\x1b[2J`);
      emulator.write(padRows(screen, now.height).join('\r\n'));
      emulator.write(`\x1b[${now.cursorY + 1};${now.cursorX + 1}H`);
    } else {
      // -J joins wrapped rows; the emulator wraps them again at the same width, row for row.
      emulator.write((replies[1] ?? []).join('\r\n'));
      emulator.write(`\x1b[${now.cursorY + 1};${now.cursorX + 1}H`);
    }
    await emulator.drain();
    if (emulator.totalScrolls !== now.historySize) {
      this.logger.debug({ tty: number, emulator: emulator.totalScrolls, tmux: now.historySize }, 'seeded history differs from tmux; using tmux numbering');
      emulator.setTotalScrolls(now.historySize);
    }
    tty.alive = !now.dead;
    if (now.dead) {
      tty.exitCode = now.deadStatus ?? emulator.wrapperExitStatus;
      tty.pendingExitReport = true;
    }
    tty.program = normalizeProgram(now.command);
    tty.pane = now;
    const changed = !state || tty.digest(normalRowsPane(now)) !== state.markDigest || now.historySize < state.markHistory;
    tty.tracker.adopted(emulator, changed);
    tty.markRowTmux = markRow;
    tty.markHistory = state?.markHistory ?? 0;
    tty.markDigest = state?.markDigest ?? '';
    this.register(tty);
    void tty.files.flush();
  }

  private createTty(number: number, command: string, paneId: string, openedAt: string, size: { cols: number; rows: number }, markAbs: number): Tty {
    return new Tty(number, command, paneId, openedAt, size, markAbs, () => this.wake());
  }

  private async openFiles(tty: Tty, scrollbackRows: number): Promise<TtyFiles> {
    const dir = this.paths.tty(tty.number);
    const { scrollbackHasText } = await TtyFiles.prepare(dir);
    return new TtyFiles(dir, this.config.raw_log_max_bytes, () => tty.snapshot(), {
      scrollbackRows: scrollbackHasText ? scrollbackRows : 0,
      scrollbackHasText,
    });
  }

  private register(tty: Tty): void {
    this.ttys.set(tty.number, tty);
    this.byPane.set(tty.paneId, tty);
    const early = this.orphanOutput.get(tty.paneId);
    this.orphanOutput.delete(tty.paneId);
    for (const chunk of early ?? []) tty.onOutput(chunk);
  }

  private onPaneOutput(paneId: string, data: Buffer): void {
    const tty = this.byPane.get(paneId);
    if (tty) {
      tty.onOutput(data);
      this.scheduleState();
      return;
    }
    const early = this.orphanOutput.get(paneId) ?? [];
    if (early.length < 1000) early.push(data);
    this.orphanOutput.set(paneId, early);
  }

  // ---------------------------------------------------------------- open, type, close

  /**
   * Open a terminal: the integrated bash, or `command`; on the lowest free number, or on
   * `tty`; in `cwd` (inside the sandbox; relative to the data directory, which is the default).
   */
  open(options: OpenOptions = {}): Promise<OpenResult> {
    return this.serialized(async () => {
      this.assertUsable();
      const { command } = options;
      const number = options.tty === undefined ? this.lowestFree() : this.freeNumber(options.tty);
      const cwd = await this.workingDirectory(options.cwd);
      const display = command?.trim() || this.config.shell;
      const shellLine = command?.trim() ? commandLine(command.trim()) : integratedShellCommand(this.config.shell, this.rcfile);
      const { cols, rows } = this.config;
      const paneId = await this.host.open({ number, shellLine, cwd, env: { AGENT_KERNEL_TTY: String(number) }, cols, rows });
      const tty = this.createTty(number, display, paneId, new Date().toISOString(), { cols, rows }, 0);
      await TtyFiles.prepare(this.paths.tty(number));
      await keepNothing(this.paths.tty(number));
      tty.files = await this.openFiles(tty, 0);
      tty.program = normalizeProgram(display.split(/\s+/)[0] ?? display);
      tty.tracker.markSeen(tty.emulator);
      tty.pending = { kind: 'open', at: Date.now(), endsBefore: 0 };
      tty.integrated = !command?.trim();
      this.register(tty);
      await this.saveState();
      await this.writeRegistry();
      void tty.files.flush();
      this.logger.info({ tty: number, command: display }, 'terminal opened');
      return { tty: number, command: display, capacity: this.capacity() };
    });
  }

  private lowestFree(): number {
    const max = this.config.max_ttys;
    for (let n = 0; n < max; n++) if (!this.ttys.has(n)) return n;
    throw new KernelError('TTY_CAPACITY', `All ${max} terminals are in use. Close one you no longer need with close(tty), then open again.`, {
      details: { max },
    });
  }

  private freeNumber(number: number): number {
    const max = this.config.max_ttys;
    if (!Number.isInteger(number) || number < 0 || number >= max) {
      throw new KernelError('TTY_OUT_OF_RANGE', `There is no TTY ${number}: terminals are numbered 0 to ${max - 1}.`, { details: { tty: number, max } });
    }
    if (this.ttys.has(number)) {
      throw new KernelError('TTY_IN_USE', `TTY ${number} is already open. Use it, close it with close(${number}) first, or open another number.`, {
        details: { tty: number },
      });
    }
    return number;
  }

  /** An absolute directory that exists in the sandbox (a relative one is under the data directory). */
  private async workingDirectory(cwd: string | undefined): Promise<string> {
    if (cwd === undefined || cwd.trim() === '') return this.instance.dataDir;
    const dir = path.posix.resolve(this.instance.dataDir, cwd);
    const found = await this.sandbox.run(['test', '-d', dir], { timeoutMs: 10_000 }).catch(() => undefined);
    if (found?.exitCode !== 0) {
      throw new KernelError('USAGE', `The working directory ${dir} does not exist in ${this.sandbox.description}. Create it, or name another cwd.`, {
        details: { cwd: dir },
      });
    }
    return dir;
  }

  /** Send text or a key to a terminal, after checking that the agent has seen everything and knows what runs there. */
  type(input: TypeInput): Promise<TypeResult> {
    return this.serialized(async () => {
      this.assertUsable();
      const tty = this.getTty(input.tty);
      const typed = parseTypedText(input.text);
      const bytes = Buffer.byteLength(input.text);
      if (bytes > this.config.max_text_bytes) {
        throw new KernelError(
          'TEXT_TOO_LONG',
          `The text is ${bytes} bytes; type() sends at most ${this.config.max_text_bytes} (tty.max_text_bytes). Write long content to a file with the Write tool and run it from the terminal instead.`,
          { details: { bytes, max: this.config.max_text_bytes } },
        );
      }
      const panes = await this.syncAll();
      const interrupting = typed.kind === 'key' && INTERRUPT_KEYS.has(typed.key);
      const unseen = [...this.ttys.values()].filter((t) => t.hasUnseen() && !(interrupting && t === tty)).map((t) => t.number);
      if (unseen.length > 0) {
        const which = unseen.length === 1 ? `TTY ${unseen[0]} has` : `TTYs ${unseen.join(', ')} have`;
        throw new KernelError('UNSEEN_OUTPUT', `${which} output you have not seen. Call wait() first, then type again.`, { details: { ttys: unseen } });
      }
      const pane = panes.find((p) => p.paneId === tty.paneId);
      if (!pane || pane.dead) {
        throw new KernelError(
          'TTY_NOT_FOUND',
          `TTY ${tty.number}'s program has exited${pane?.deadStatus === undefined ? '' : ` (status ${pane.deadStatus})`}. Call wait() to see its last output; it is then closed. Open a new terminal with open().`,
          { details: { tty: tty.number } },
        );
      }
      const actual = tty.program;
      if (!programMatches(input.expect, actual)) {
        throw new KernelError(
          'EXPECT_MISMATCH',
          `TTY ${tty.number} is running ${actual || 'an unknown program'}, not ${input.expect}. Nothing was sent. Check its screen with wait(), then type again with expect: "${actual}".`,
          { details: { tty: tty.number, expected: input.expect, actual } },
        );
      }
      const sent: TypeResult['sent'] = typed.kind;
      tty.pending = { kind: 'type', at: Date.now(), endsBefore: tty.commandEnds };
      tty.readingKeys = undefined;
      await this.host.send(tty.paneId, typed, {
        enter: input.enter ?? true,
        bracketed: tty.emulator.bracketedPaste,
        applicationCursor: tty.emulator.applicationCursor,
      });
      tty.lastActivity = Date.now();
      this.wake();
      return { tty: tty.number, sent, bytes: typed.kind === 'key' ? 0 : Buffer.byteLength(typed.text) };
    });
  }

  /** A host-private file as the agent sees it: in the container, through the read-only mounts (paths.ts). */
  private agentPath(hostPath: string): string {
    return this.sandbox.kind === 'host' ? hostPath : containerView(this.paths, hostPath);
  }

  /** End a terminal's processes and archive its scrollback. */
  close(number: number): Promise<CloseResult> {
    return this.serialized(async () => {
      this.assertUsable();
      const tty = this.getTty(number);
      const archivedTo = await this.closeTty(tty);
      return { tty: number, archivedTo, capacity: this.capacity() };
    });
  }

  private async closeTty(tty: Tty): Promise<string> {
    const pid = tty.pane?.pid ?? (await this.listPanes()).find((p) => p.paneId === tty.paneId)?.pid;
    if (pid && tty.alive) {
      // The whole session of the terminal: background jobs have their own process groups and may ignore SIGHUP.
      await this.sandbox
        .run(['sh', '-c', `pkill -KILL -s ${pid} 2>/dev/null; kill -KILL -- -${pid} 2>/dev/null; true`], { timeoutMs: 10_000 })
        .catch((error: unknown) => this.logger.warn({ tty: tty.number, error: describeError(error) }, 'killing the terminal processes failed'));
    }
    await this.host.kill(tty.paneId);
    this.ttys.delete(tty.number);
    this.byPane.delete(tty.paneId);
    await tty.emulator.drain();
    tty.emulator.flushRowsAbove();
    const finalRows = tty.emulator.readRows(tty.emulator.flushedAbs, tty.emulator.contentEndAbs());
    const archivedTo = this.archivePath(tty.number);
    await tty.files.archive(archivedTo, finalRows);
    tty.emulator.dispose();
    await this.saveState();
    await this.writeRegistry();
    this.logger.info({ tty: tty.number, archivedTo }, 'terminal closed');
    return this.agentPath(archivedTo);
  }

  private archivePath(number: number): string {
    const base = path.join(this.paths.sessionArchive, `tty_${number}-tick-${String(this.tick).padStart(3, '0')}`);
    return base;
  }

  /** Resize one terminal (the program gets SIGWINCH). */
  resize(number: number, cols: number, rows: number): Promise<TtyInfo> {
    return this.serialized(async () => {
      this.assertUsable();
      const tty = this.getTty(number);
      if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 20 || cols > 500 || rows < 5 || rows > 200) {
        throw new KernelError('USAGE', `A terminal is 20-500 columns by 5-200 rows; got ${cols}x${rows}.`, { details: { cols, rows } });
      }
      await this.host.resize(tty.paneId, number, cols, rows);
      await this.syncAll();
      tty.emulator.resize(cols, rows);
      await this.saveState();
      return this.info(tty);
    });
  }

  // ---------------------------------------------------------------- wait

  /**
   * Wait until what the agent started is done (or the timeout), then report what changed on
   * every terminal since the agent last looked, and mark it seen. An aborted wait reports
   * nothing and marks nothing.
   */
  async wait(timeoutSeconds: number = DEFAULT_WAIT_SECONDS, signal?: AbortSignal): Promise<WaitResult> {
    this.assertUsable();
    const started = Date.now();
    const timeoutMs = Math.max(0, Math.min(MAX_WAIT_SECONDS, Number.isFinite(timeoutSeconds) ? timeoutSeconds : DEFAULT_WAIT_SECONDS)) * 1000;
    const deadline = started + timeoutMs;
    let reason: WaitReason | undefined;
    let lastPoll = 0;
    for (;;) {
      signal?.throwIfAborted();
      if (this.tmuxGone) break;
      if (Date.now() - lastPoll >= POLL_MS) {
        await this.syncAll();
        lastPoll = Date.now();
      }
      reason = await this.judge(started);
      if (reason) break;
      const now = Date.now();
      if (now >= deadline) {
        reason = 'timeout';
        break;
      }
      await this.nextActivity(Math.min(POLL_MS, deadline - now), signal);
    }
    signal?.throwIfAborted();
    return this.serialized(() => this.report(reason ?? 'timeout', started, signal));
  }

  /** undefined: keep waiting. */
  private async judge(started: number): Promise<WaitReason | undefined> {
    const ttys = [...this.ttys.values()];
    const acted = ttys.filter((t) => t.pending);
    const now = Date.now();
    const verdicts = new Map<Tty, WaitReason | undefined>();
    const consider = acted.length > 0 ? acted : ttys.filter((t) => t.hasUnseen() || t.commandRunning || (t.alive && t.program && !isShell(t.program)));
    if (consider.length === 0) {
      return now - started >= IDLE_GRACE_MS ? 'idle' : undefined;
    }
    for (const tty of consider) {
      const since = Math.max(tty.pending?.at ?? 0, tty.emulator.lastOutputAt);
      tty.settleEnding(now, now - since);
      let verdict = judgeCompletion({
        dead: !tty.alive,
        commandFinished: tty.pending ? tty.commandEnds > tty.pending.endsBefore : tty.commandEnds > tty.reportedEnds,
        program: tty.program,
        alternateScreen: tty.emulator.alternateScreen,
        readingKeys: tty.readingKeys?.key === `${tty.pane?.pid}:${tty.program}` ? tty.readingKeys.value : undefined,
        quietMs: now - since,
        settleMs: this.config.settle_ms,
      });
      // A shell the kernel started is ready at its first prompt (it may be slow to read its rc files).
      if (verdict === 'settled' && tty.pending?.kind === 'open' && tty.integrated && tty.commandEnds === 0 && now - tty.pending.at < FIRST_PROMPT_MS) {
        verdict = 'running';
      }
      if (verdict === 'ask-termios') {
        tty.readingKeys = { key: `${tty.pane?.pid}:${tty.program}`, value: await this.readingKeys(tty) };
        verdict = tty.readingKeys.value ? 'settled' : 'running';
      }
      verdicts.set(tty, verdict === 'running' ? undefined : verdict);
    }
    const done = [...verdicts.entries()].filter(([, v]) => v !== undefined);
    // What the agent started: all of it must be done. Otherwise (just watching): the first thing that is.
    if (acted.length > 0 ? done.length < consider.length : done.length === 0) return undefined;
    return done.sort(([a], [b]) => a.number - b.number)[0]?.[1];
  }

  private async readingKeys(tty: Tty): Promise<boolean | undefined> {
    const device = tty.pane?.tty;
    if (!device) return undefined;
    const result = await this.sandbox.run(['stty', '-a', '-F', device], { timeoutMs: 5000 }).catch(() => undefined);
    return result && result.exitCode === 0 ? parseReadingKeys(result.stdout) : undefined;
  }

  private async report(reason: WaitReason, started: number, signal?: AbortSignal): Promise<WaitResult> {
    const panes = await this.syncAll();
    signal?.throwIfAborted();
    const changed: TtyReport[] = [];
    const closing: Tty[] = [];
    for (const tty of [...this.ttys.values()].sort((a, b) => a.number - b.number)) {
      const pane = panes.find((p) => p.paneId === tty.paneId);
      const newEnd = tty.commandEnds > tty.reportedEnds ? tty.lastEnd : undefined;
      if (!tty.hasUnseen() && !newEnd && tty.alive) {
        tty.pending = undefined;
        continue;
      }
      const fullScreen = tty.emulator.alternateScreen && tty.alive;
      const files = { scrollback: this.agentPath(tty.files.scrollback), screen: this.agentPath(tty.files.screen) };
      let text: string;
      let totalLines: number;
      let elidedLines = 0;
      if (fullScreen) {
        text = renderScreen(tty.emulator.screenText());
        totalLines = text ? text.split('\n').length : 0;
      } else {
        tty.emulator.flushRowsAbove();
        const rendered = renderNewOutput(tty.tracker.collect(tty.emulator), `${files.scrollback} (then ${files.screen})`);
        ({ text, totalLines, elidedLines } = rendered);
      }
      const item: TtyReport = { tty: tty.number, program: tty.program, alive: tty.alive, fullScreen, text, totalLines, elidedLines, files };
      if (!tty.alive) {
        if (tty.exitCode !== undefined) item.exitCode = tty.exitCode;
        closing.push(tty);
      } else if (newEnd?.durationMs !== undefined) {
        if (newEnd.exitCode !== undefined) item.exitCode = newEnd.exitCode;
        item.durationMs = newEnd.durationMs;
      }
      changed.push(item);
      // Seen: the mark moves to the cursor, in our numbering and in tmux's.
      tty.tracker.markSeen(tty.emulator);
      tty.reportedEnds = tty.commandEnds;
      tty.pending = undefined;
      tty.pendingExitReport = false;
      if (pane) {
        const normal = normalRowsPane(pane);
        tty.markRowTmux = normal.historySize + normal.cursorY;
        tty.markHistory = pane.historySize;
        tty.markDigest = tty.digest(normal);
      }
      await tty.files.flush();
    }
    for (const tty of closing) {
      const item = changed.find((c) => c.tty === tty.number);
      const archivedTo = await this.closeTty(tty);
      if (item) item.archivedTo = archivedTo;
    }
    await this.saveState();
    return {
      reason,
      elapsedMs: Date.now() - started,
      changed,
      open: [...this.ttys.values()].sort((a, b) => a.number - b.number).map((t) => ({ tty: t.number, program: t.program, alive: t.alive })),
    };
  }

  private nextActivity(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.activity.off('activity', done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, ms));
      this.activity.once('activity', done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private wake(): void {
    this.activity.emit('activity');
  }

  // ---------------------------------------------------------------- state

  /**
   * Ask tmux about every pane, then let each emulator catch up: tmux sends a pane's output
   * before the reply to a later command, so afterwards the emulators hold exactly what tmux
   * had at that instant.
   */
  private async syncAll(): Promise<PaneInfo[]> {
    const panes = await this.listPanes();
    await Promise.all([...this.ttys.values()].map((t) => t.emulator.drain()));
    for (const tty of this.ttys.values()) {
      const pane = panes.find((p) => p.paneId === tty.paneId);
      if (!pane) {
        if (tty.alive) {
          tty.alive = false;
          tty.exitCode = tty.emulator.wrapperExitStatus;
          tty.pendingExitReport = true;
        }
        continue;
      }
      tty.pane = pane;
      const program = await this.foregroundProgram(tty, pane);
      if (program !== tty.program) tty.readingKeys = undefined;
      tty.program = program;
      if (pane.dead && tty.alive) {
        // tmux marks a pane dead when its pty closes and learns the exit status only when it reaps
        // the process, a moment later on a busy machine: give the status a little time to arrive.
        if (pane.deadStatus === undefined && Date.now() - (tty.deadWithoutStatusSince ??= Date.now()) < DEAD_STATUS_GRACE_MS) continue;
        await this.catchUpDeadPane(tty, pane);
        tty.alive = false;
        tty.exitCode = pane.deadStatus ?? tty.emulator.wrapperExitStatus;
        tty.pendingExitReport = true;
        tty.files.schedule();
      }
    }
    return panes;
  }

  /**
   * The program in the foreground, as `expect` names it. tmux names the process group
   * leader; in a pipeline (`seq 1 200 | less`) that is the first process, which may be gone:
   * tmux then names the shell. While the shell says a command runs, ask ps for the group's
   * newest process instead (at most once a second).
   */
  private async foregroundProgram(tty: Tty, pane: PaneInfo): Promise<string> {
    const named = normalizeProgram(pane.command);
    if (!isShell(named) || !tty.commandRunning || pane.dead) return named;
    const now = Date.now();
    if (tty.foreground && tty.foreground.pid === pane.pid && now - tty.foreground.at < 1000) return tty.foreground.name;
    const script = 'g=$(ps -o tpgid= -p "$1" | tr -d " "); [ -n "$g" ] && ps -e -o pgid= -o comm= | awk -v g="$g" \'$1 == g { print $2 }\'';
    const result = await this.sandbox.run(['sh', '-c', script, 'sh', String(pane.pid)], { timeoutMs: 5000 }).catch(() => undefined);
    const names = (result?.stdout ?? '').split('\n').map((l) => l.trim()).filter(Boolean);
    const name = names.length > 0 ? normalizeProgram(names[names.length - 1]!) : named;
    tty.foreground = { pid: pane.pid, at: now, name };
    return name;
  }

  /**
   * tmux drops output it had not yet sent to a control client when the pane's process
   * ends (the pane's fd closes), so a fast command's last lines may never arrive. tmux's own
   * screen has them: copy the rows from our cursor on from it.
   */
  private async catchUpDeadPane(tty: Tty, pane: PaneInfo): Promise<void> {
    const emulator = tty.emulator;
    const tmuxCursor = pane.historySize + pane.cursorY;
    if (pane.alternateOn || tmuxCursor < emulator.cursorAbs) return;
    const from = emulator.cursorAbs - pane.historySize;
    const rows = await this.host.rowsFrom(pane.paneId, from);
    if (!rows) return;
    const known = emulator.readRows(emulator.cursorAbs, emulator.cursorAbs + 1)[0]?.text ?? '';
    const lines = rows.slice();
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    if (lines.length <= 1 && stripSgr(lines[0] ?? '').trimEnd() === known.trimEnd()) return;
    emulator.write(`\r\x1b[J${lines.join('\r\n')}\x1b[${pane.cursorY + 1};${pane.cursorX + 1}H`);
    await emulator.drain();
    this.logger.debug({ tty: tty.number, rows: lines.length }, 'caught up with a dead pane from tmux');
  }

  private async listPanes(): Promise<PaneInfo[]> {
    return this.host.panes();
  }

  private scheduleState(): void {
    if (this.stateTimer || this.isDisposed) return;
    this.stateTimer = setTimeout(() => {
      this.stateTimer = undefined;
      this.saveState().catch((error: unknown) => this.logger.warn({ error: describeError(error) }, 'saving terminal state failed'));
    }, 1000);
  }

  private async saveState(): Promise<void> {
    const ttys: TtyState[] = [...this.ttys.values()].map((t) => ({
      tty: t.number,
      command: t.command,
      paneId: t.paneId,
      openedAt: t.openedAt,
      cols: t.emulator.cols,
      rows: t.emulator.rows,
      markRow: t.markRowTmux,
      markHistory: t.markHistory,
      markDigest: t.markDigest,
      scrollbackRows: t.files.scrollbackRows,
    }));
    await saveSeenState(this.paths.kernelState, ttys);
  }

  private async writeRegistry(): Promise<void> {
    const registry = {
      instance: this.instance.name,
      sandbox: this.sandbox.description,
      ...(this.host instanceof TmuxHost ? { tmuxSocket: this.host.socket } : { persistent: false }),
      updatedAt: new Date().toISOString(),
      ttys: [...this.ttys.values()]
        .sort((a, b) => a.number - b.number)
        .map((t) => ({
          tty: t.number,
          command: t.command,
          program: t.program,
          alive: t.alive,
          ...(t.exitCode === undefined ? {} : { exitCode: t.exitCode }),
          openedAt: t.openedAt,
          dir: t.files.dir,
        })),
    };
    await writeFileAtomic(this.paths.sessionRegistry, `${JSON.stringify(registry, null, 2)}\n`);
  }

  // ---------------------------------------------------------------- queries

  list(): TtyInfo[] {
    return [...this.ttys.values()].sort((a, b) => a.number - b.number).map((t) => this.info(t));
  }

  hasUnseen(): boolean {
    return [...this.ttys.values()].some((t) => t.hasUnseen());
  }

  /** A line for people and for login: which terminals have output the agent has not seen. */
  unseenSummary(): string {
    const unseen = [...this.ttys.values()].filter((t) => t.hasUnseen()).map((t) => t.number);
    if (unseen.length === 0) return 'No terminal has unseen output.';
    return `${unseen.length === 1 ? `TTY ${unseen[0]} has` : `TTYs ${unseen.join(', ')} have`} output not seen yet: call wait().`;
  }

  private info(tty: Tty): TtyInfo {
    const collected = tty.hasUnseen() ? tty.tracker.collect(tty.emulator).total : 0;
    return {
      tty: tty.number,
      command: tty.command,
      program: tty.program,
      alive: tty.alive,
      ...(tty.exitCode === undefined ? {} : { exitCode: tty.exitCode }),
      unseenLines: collected,
      lastActivity: new Date(tty.lastActivity).toISOString(),
      cols: tty.emulator.cols,
      rows: tty.emulator.rows,
    };
  }

  private capacity(): Capacity {
    return { used: this.ttys.size, max: this.config.max_ttys };
  }

  private getTty(number: number): Tty {
    if (!Number.isInteger(number) || number < 0 || number >= this.config.max_ttys) {
      throw new KernelError('TTY_OUT_OF_RANGE', `There is no TTY ${number}: terminals are numbered 0 to ${this.config.max_ttys - 1}.`, {
        details: { tty: number, max: this.config.max_ttys },
      });
    }
    const tty = this.ttys.get(number);
    if (!tty) {
      const open = [...this.ttys.keys()].sort((a, b) => a - b);
      throw new KernelError(
        'TTY_NOT_FOUND',
        `TTY ${number} is not open (${open.length > 0 ? `open: ${open.join(', ')}` : 'none is open'}). Open one with open().`,
        { details: { tty: number, open } },
      );
    }
    return tty;
  }

  private assertUsable(): void {
    if (this.isDisposed) throw new KernelError('INTERNAL', 'This terminal manager was disposed; start a new one.');
    if (this.tmuxGone) {
      throw new KernelError('TMUX_FAILED', `The connection to tmux ended (${this.tmuxGone}); the container may have stopped. Restart the server to recover.`);
    }
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.serial.then(fn, fn);
    this.serial = run.catch(() => {});
    return run;
  }

  /** Detach and release the lock. The terminals live on in tmux (PTYs end here). */
  async dispose(): Promise<void> {
    if (this.isDisposed) return;
    this.isDisposed = true;
    if (this.stateTimer) clearTimeout(this.stateTimer);
    await this.serial.catch(() => {});
    if (this.host && !this.host.closed) {
      await this.syncAll().catch(() => []);
      for (const tty of this.ttys.values()) tty.emulator.flushRowsAbove();
      await Promise.all([...this.ttys.values()].map((t) => t.files.close()));
      await this.saveState().catch(() => {});
      this.host.detach();
    }
    for (const tty of this.ttys.values()) tty.emulator.dispose();
    await this.lock.release();
  }
}

/** For a pane in full-screen mode, the normal screen's cursor is the one tmux saved. */
function normalRowsPane(pane: PaneInfo): Pick<PaneInfo, 'historySize' | 'cursorX' | 'cursorY'> {
  return pane.alternateOn
    ? { historySize: pane.historySize, cursorX: pane.alternateSavedX, cursorY: pane.alternateSavedY }
    : { historySize: pane.historySize, cursorX: pane.cursorX, cursorY: pane.cursorY };
}

const ESC = String.fromCharCode(27);
const SGR = new RegExp(`${ESC}\\[[0-9;]*m`, 'g');

/** Text without colour escapes (capture-pane -e adds them). */
function stripSgr(text: string): string {
  return text.replace(SGR, '');
}

/** Exactly `count` rows, so that writing them scrolls the emulator as far as tmux had scrolled. */
function padRows(lines: string[], count: number): string[] {
  const out = lines.slice(0, count);
  while (out.length < count) out.push('');
  return out;
}

/** A new terminal's directory starts empty (old files belong to an earlier terminal with the same number). */
async function keepNothing(dir: string): Promise<void> {
  for (const name of ['scrollback', 'screen', 'screen.ansi', 'raw', 'raw.1', 'status']) await rm(path.join(dir, name), { force: true });
}
