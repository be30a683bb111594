import { randomUUID } from 'node:crypto';
import type { WriteStream } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import type { Instance } from '../config/instance.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { settlesWithin } from '../util/race-timeout.js';
import { sleep } from './backoff.js';
import { type Classification, type ErrorClass, type ErrorSignals } from './harnesses/classify.js';
import { ContextTracker, type ContextSnapshot, wrapUpMessage } from './context.js';
import { BLOCK_COMPACTION, decideStop } from './hook-policy.js';
import { type HookChannel, type HookEventKind, type HookReply, hookSocketPath, listenHookChannel } from './hook-channel.js';
import { type Harness, type HarnessEvent, type HarnessSetup, MCP_SERVER_NAME } from './harnesses/harness.js';
import { kernelFiles } from './kernel-files.js';
import { midTickMessage } from './prompt.js';
import { type GroupProcess, reapGroup, spawnGroup, stopGroup } from './process-group.js';
import { hookSettings, mcpConfig, serverEnv, writeTickFiles } from './tick-files.js';

/**
 * One run of the harness within a tick (a tick retries with a fresh session after a
 * transient error). Owns the process group, the stream, the hooks channel and the watchdogs.
 */

/** Why the runner ended a session itself. */
export type EndReason = Extract<ErrorClass, 'context' | 'timeout' | 'idle' | 'aborted' | 'mcp'>;

export interface SessionTokens {
  input: number;
  output: number;
  cache_creation: number;
  cache_read: number;
}

export interface SessionResult {
  sessionId: string;
  /** Set when the runner ended the session (watchdog, compaction, MCP failure, abort). */
  endedBy?: EndReason;
  endDetail?: string;
  /** From the stream; undefined when the session ended with a successful result. */
  classification?: Classification;
  sawResult: boolean;
  exitCode: number | null;
  lastMessage: string;
  tokens: SessionTokens;
  costUsd: number;
  context: ContextSnapshot;
  stderrTail: string;
  transcriptCopy?: string;
}

export interface SessionHooks {
  /** Pre-stop checks: the blocking issues (empty: the agent may stop). */
  preStopIssues(): Promise<string[]>;
}

export interface SessionOptions {
  instance: Instance;
  harness: Harness;
  tick: number;
  attempt: number;
  prompt: string;
  env: NodeJS.ProcessEnv;
  /** Where this tick's generated files go (`<state>/kernel/tick-NNN`). */
  workDir: string;
  tickLog: WriteStream;
  logger: Logger;
  hooks: SessionHooks;
  signal?: AbortSignal;
  /** Wall-clock deadline (epoch ms) of the session. */
  deadline: number;
  /** Told the harness's process group id once it runs. */
  onSpawn?: (pgid: number) => void;
}

/** How long our MCP server may take to connect before the tick gives up. */
export const MCP_CONNECT_TIMEOUT_MS = 60_000;
/** A harness that does not answer the MCP status request within this gets the prompt anyway (checked at init instead). */
const MCP_STATUS_NO_ANSWER_MS = 10_000;
/** The Stop hook blocks at most this often per session, so that an unfixable issue cannot keep an agent forever. */
export const MAX_STOP_BLOCKS = 3;
/** After a result with messages still being processed, how long a silent harness gets before its input is closed. */
const AFTER_RESULT_QUIET_MS = 60_000;
const STDERR_TAIL_BYTES = 8192;

export class HarnessSession {
  readonly sessionId = randomUUID();
  private proc: GroupProcess | undefined;
  private channel: HookChannel | undefined;
  private readonly context: ContextTracker;
  private stdinOpen = false;
  private promptSent = false;
  private writtenSinceResult = 0;
  private sawResult = false;
  private endedBy: EndReason | undefined;
  private endDetail: string | undefined;
  private stopping: Promise<void> | undefined;
  private lastEventAt = Date.now();
  private stopBlocks = 0;
  private wrapUpSent = false;
  private lastMessage = '';
  private stderrTail = '';
  private readonly tokens: SessionTokens = { input: 0, output: 0, cache_creation: 0, cache_read: 0 };
  private costUsd = 0;
  private signals: ErrorSignals = {};
  private resultSignals: ErrorSignals | undefined;
  private readonly statusWaiters = new Map<string, (servers: { name: string; status: string }[]) => void>();
  private initStatus: string | undefined;
  private quietTimer: NodeJS.Timeout | undefined;
  private readonly queued: string[] = [];

  constructor(private readonly options: SessionOptions) {
    const runner = options.instance.config.runner;
    this.context = new ContextTracker({
      configured: runner.context_window,
      model: runner.model ?? options.instance.config.model,
      wrapUpRatio: runner.wrap_up_ratio,
    });
  }

  /**
   * Hand the running agent a message; false when it no longer takes input. Before the prompt
   * is sent (the MCP server still connecting) messages wait and follow the prompt.
   */
  deliver(message: string): boolean {
    if (this.endedBy || !this.options.harness.encodeUserMessage) return false;
    if (this.proc && (!this.stdinOpen || this.proc.hasExited())) return false;
    if (!this.promptSent) {
      this.queued.push(message);
      return true;
    }
    this.writeLine(this.options.harness.encodeUserMessage(midTickMessage(message)));
    this.writtenSinceResult++;
    this.marker({ event: 'message-delivered', chars: message.length });
    return true;
  }

  async run(): Promise<SessionResult> {
    const { instance, harness, logger } = this.options;
    const files = kernelFiles();
    const socketPath = hookSocketPath(path.join(this.options.workDir, '..'));
    const generated = await writeTickFiles(
      path.join(this.options.workDir, `attempt-${this.options.attempt}`),
      mcpConfig({ nodePath: process.execPath, serverBin: files.serverBin, dataDir: instance.dataDir, env: serverEnv() }),
      hookSettings({ nodePath: process.execPath, hookCli: files.hookCli, socketPath }),
    );
    const setup: HarnessSetup = {
      instanceName: instance.name,
      dataDir: instance.dataDir,
      tick: this.options.tick,
      sessionId: this.sessionId,
      prompt: this.options.prompt,
      mcpConfigFile: generated.mcpConfigFile,
      settingsFile: generated.settingsFile,
      config: instance.config.runner,
      model: instance.config.runner.model ?? instance.config.model,
      env: this.options.env,
    };
    const invocation = harness.invocation(setup);
    this.marker({ event: 'attempt-start', attempt: this.options.attempt, session_id: this.sessionId, command: invocation.command });
    logger.info({ attempt: this.options.attempt, sessionId: this.sessionId, command: invocation.command }, 'starting harness');
    this.channel = await listenHookChannel(socketPath, (kind, input) => this.onHook(kind, input), (error) =>
      logger.warn({ err: describeError(error) }, 'hook channel error'),
    );

    let proc: GroupProcess;
    try {
      proc = await spawnGroup(invocation.command, invocation.args, { cwd: invocation.cwd, env: invocation.env });
    } catch (error) {
      await this.channel.close();
      throw error;
    }
    this.proc = proc;
    this.options.onSpawn?.(proc.pid);
    this.stdinOpen = invocation.interactiveStdin;
    if (!invocation.interactiveStdin) {
      proc.child.stdin?.end();
      this.promptSent = true;
    }

    proc.child.stderr?.setEncoding('utf8');
    proc.child.stderr?.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
    });
    const lines = readline.createInterface({ input: proc.child.stdout!, crlfDelay: Infinity });
    const streamEnded = new Promise<void>((resolve) => lines.once('close', resolve));
    lines.on('line', (line) => this.onLine(line));

    const watchdog = setInterval(() => this.checkWatchdogs(), 1000);
    const onAbort = (): void => this.end('aborted', 'the tick was cancelled');
    this.options.signal?.addEventListener('abort', onAbort, { once: true });
    if (this.options.signal?.aborted) onAbort();

    try {
      if (invocation.interactiveStdin && !this.endedBy) await this.connectAndPrompt();
      const exit = await proc.exited;
      await this.stopping;
      await reapGroup(proc);
      // A process that left the group could keep the pipe open: do not wait for it forever.
      await settlesWithin(streamEnded, 5000);
      this.marker({ event: 'attempt-end', attempt: this.options.attempt, exit_code: exit.code, signal: exit.signal, ended_by: this.endedBy });
      const transcriptCopy = await this.copyTranscript(setup, invocation.env);
      return this.result(exit.code, transcriptCopy);
    } finally {
      clearInterval(watchdog);
      if (this.quietTimer) clearTimeout(this.quietTimer);
      this.options.signal?.removeEventListener('abort', onAbort);
      if (!proc.hasExited()) await stopGroup(proc, { signal: 'SIGKILL', graceMs: 0 });
      await this.channel.close();
    }
  }

  /** Ask for our server's status until it is connected (or clearly is not), then send the prompt. */
  private async connectAndPrompt(): Promise<void> {
    const { harness } = this.options;
    if (harness.encodeMcpStatusRequest) {
      const deadline = Date.now() + MCP_CONNECT_TIMEOUT_MS;
      let request = 0;
      while (!this.endedBy && !this.proc?.hasExited()) {
        const id = `mcp-status-${++request}`;
        const servers = await this.requestMcpStatus(id, harness.encodeMcpStatusRequest(id));
        if (this.endedBy || this.proc?.hasExited()) return;
        if (servers === undefined) {
          this.options.logger.warn('the harness did not answer an MCP status request; checking the server at init instead');
          break;
        }
        const ours = servers.find((s) => s.name === MCP_SERVER_NAME);
        const status = ours?.status ?? 'missing';
        if (status === 'connected') {
          this.options.logger.info('MCP server connected');
          break;
        }
        if (status !== 'pending' || Date.now() > deadline) {
          this.end('mcp', this.mcpFailure(status));
          return;
        }
        await sleep(250, this.options.signal);
      }
    }
    if (this.endedBy || this.proc?.hasExited()) return;
    this.writeLine(harness.encodeUserMessage!(this.options.prompt));
    this.promptSent = true;
    for (const message of this.queued.splice(0)) this.deliver(message);
  }

  private requestMcpStatus(id: string, line: string): Promise<{ name: string; status: string }[] | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.statusWaiters.delete(id);
        resolve(undefined);
      }, MCP_STATUS_NO_ANSWER_MS);
      this.statusWaiters.set(id, (servers) => {
        clearTimeout(timer);
        resolve(servers);
      });
      void this.proc?.exited.then(() => {
        clearTimeout(timer);
        resolve([]);
      });
      this.writeLine(line);
    });
  }

  private mcpFailure(status: string): string {
    const dir = this.options.instance.dataDir;
    return (
      `The MCP server "${MCP_SERVER_NAME}" did not connect (status: ${status}). ` +
      `Read its log (${path.join(this.options.instance.paths.logs, 'server-current.log')}), or run "node ${kernelFiles().serverBin} serve ${dir}" by hand to see why.`
    );
  }

  private writeLine(line: string): void {
    const stdin = this.proc?.child.stdin;
    if (!stdin || !this.stdinOpen || stdin.destroyed) return;
    stdin.write(line + '\n');
  }

  private closeStdin(): void {
    if (!this.stdinOpen) return;
    this.stdinOpen = false;
    this.proc?.child.stdin?.end();
  }

  private marker(fields: Record<string, unknown>): void {
    this.options.tickLog.write(JSON.stringify({ type: 'kernel_runner', tick: this.options.tick, time: new Date().toISOString(), ...fields }) + '\n');
  }

  private onLine(line: string): void {
    if (!line.trim()) return;
    this.lastEventAt = Date.now();
    this.options.tickLog.write(line + '\n');
    for (const event of this.options.harness.parseLine(line)) this.onEvent(event);
  }

  private onEvent(event: HarnessEvent): void {
    switch (event.type) {
      case 'mcp-status':
        this.statusWaiters.get(event.requestId)?.(event.servers);
        this.statusWaiters.delete(event.requestId);
        return;
      case 'init': {
        this.context.observeModel(event.model);
        const ours = event.mcpServers.find((s) => s.name === MCP_SERVER_NAME);
        this.initStatus = ours?.status ?? 'missing';
        if (this.initStatus !== 'connected' && this.initStatus !== 'pending') this.end('mcp', this.mcpFailure(this.initStatus));
        return;
      }
      case 'assistant':
        this.context.observeAssistant(event.usage, event.mainThread);
        if (event.mainThread && event.text) this.lastMessage = event.text;
        if (event.error) {
          this.signals.assistantError = event.error;
          this.signals.assistantText = event.text;
        }
        return;
      case 'api-retry':
        this.signals.lastRetry = { status: event.status, ...(event.error === undefined ? {} : { error: event.error }) };
        this.options.logger.warn({ status: event.status, attempt: event.attempt }, 'the harness is retrying an API call');
        return;
      case 'rate-limit':
        this.signals.rateLimit = { status: event.status, ...(event.resetsAt === undefined ? {} : { resetsAt: event.resetsAt < 1e12 ? event.resetsAt * 1000 : event.resetsAt }) };
        return;
      case 'compacting':
        this.end('context', 'the context was about to be compacted');
        return;
      case 'result':
        this.onResult(event);
        return;
      case 'tool-result':
        return;
    }
  }

  private onResult(event: Extract<HarnessEvent, { type: 'result' }>): void {
    this.sawResult = true;
    this.context.observeWindow(event.contextWindow);
    if (event.usage) {
      this.tokens.input += event.usage.input_tokens ?? 0;
      this.tokens.output += event.usage.output_tokens ?? 0;
      this.tokens.cache_creation += event.usage.cache_creation_input_tokens ?? 0;
      this.tokens.cache_read += event.usage.cache_read_input_tokens ?? 0;
    }
    if (event.costUsd !== undefined) this.costUsd = Math.max(this.costUsd, event.costUsd);
    this.resultSignals = {
      ...this.signals,
      resultIsError: event.isError,
      resultSubtype: event.subtype,
      resultText: event.text,
      apiErrorStatus: event.apiErrorStatus ?? null,
    };
    this.signals = { ...(this.signals.rateLimit ? { rateLimit: this.signals.rateLimit } : {}) };
    if (event.isError || this.writtenSinceResult === 0) {
      this.closeStdin();
      return;
    }
    // Messages arrived during that turn: the harness answers them in further turns.
    this.writtenSinceResult = 0;
    if (this.quietTimer) clearTimeout(this.quietTimer);
    const resultAt = this.lastEventAt;
    this.quietTimer = setTimeout(() => {
      if (this.lastEventAt === resultAt) this.closeStdin();
    }, AFTER_RESULT_QUIET_MS);
  }

  private async onHook(kind: HookEventKind, input: Record<string, unknown>): Promise<HookReply> {
    this.lastEventAt = Date.now();
    const { logger } = this.options;
    switch (kind) {
      case 'post-tool-use': {
        if (!this.context.shouldWrapUp()) return {};
        const snapshot = this.context.snapshot();
        if (!this.wrapUpSent) {
          this.wrapUpSent = true;
          logger.info({ used: snapshot.used, window: snapshot.window }, 'context past the wrap-up ratio: telling the agent to wrap up');
          this.marker({ event: 'wrap-up', context_used: snapshot.used, context_window: snapshot.window });
        }
        return { stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: wrapUpMessage(snapshot) } }) };
      }
      case 'pre-compact':
        logger.warn({ trigger: input.trigger }, 'compaction requested: blocking it and ending the tick');
        this.end('context', 'the context was about to be compacted');
        return BLOCK_COMPACTION;
      case 'stop': {
        if (this.endedBy) return {};
        const issues = await this.options.hooks.preStopIssues().catch((error: unknown) => {
          logger.warn({ err: describeError(error) }, 'pre-stop checks failed; letting the agent stop');
          return [] as string[];
        });
        this.lastEventAt = Date.now();
        const decision = decideStop(issues, this.stopBlocks, MAX_STOP_BLOCKS);
        if (decision.kind === 'allow') return {};
        if (decision.kind === 'give-up') {
          logger.warn({ issues }, `pre-stop issues remain after ${MAX_STOP_BLOCKS} reminders; letting the agent stop`);
          this.marker({ event: 'pre-stop-gave-up', issues });
          return {};
        }
        this.stopBlocks++;
        this.marker({ event: 'pre-stop-block', issues });
        return decision.reply;
      }
    }
  }

  private checkWatchdogs(): void {
    if (this.endedBy || !this.proc || this.proc.hasExited()) return;
    const runner = this.options.instance.config.runner;
    const now = Date.now();
    if (now >= this.options.deadline) this.end('timeout', `the tick ran past its time limit (runner.timeout ${Math.round(runner.timeout / 1000)} s)`);
    else if (now - this.lastEventAt >= runner.idle_timeout)
      this.end('idle', `the harness was silent for ${Math.round(runner.idle_timeout / 1000)} s (runner.idle_timeout)`);
  }

  /** End the session from the runner's side: the harness's stop signal, the grace period, then the whole group is killed. */
  end(reason: EndReason, detail: string): void {
    if (this.endedBy) return;
    this.endedBy = reason;
    this.endDetail = detail;
    this.options.logger.warn({ reason, detail }, 'ending the harness session');
    this.marker({ event: 'ending', reason, detail });
    for (const waiter of this.statusWaiters.values()) waiter([]);
    this.statusWaiters.clear();
    this.closeStdin();
    if (this.proc) {
      this.stopping = stopGroup(this.proc, { signal: this.options.harness.stopSignal, graceMs: this.options.instance.config.runner.grace_period });
    }
  }

  private async copyTranscript(setup: HarnessSetup, env: NodeJS.ProcessEnv): Promise<string | undefined> {
    const source = this.options.harness.sessionTranscriptPath?.(setup, env);
    if (!source) return undefined;
    const suffix = this.options.attempt > 1 ? `-${this.options.attempt}` : '';
    const target = this.options.instance.paths.tickLog(this.options.tick).replace(/\.jsonl$/, `.session${suffix}.jsonl`);
    try {
      await mkdir(path.dirname(target), { recursive: true });
      await copyFile(source, target);
      return target;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.options.logger.warn({ err: describeError(error), source }, 'cannot copy the session transcript');
      return undefined;
    }
  }

  private result(exitCode: number | null, transcriptCopy: string | undefined): SessionResult {
    const signals = this.resultSignals ?? this.signals;
    let classification = this.endedBy ? undefined : this.options.harness.classify(signals);
    const cleanExitIsResult = this.options.harness.exitCodeIsResult === true && exitCode === 0;
    if (!this.endedBy && !this.sawResult && !classification && !cleanExitIsResult) classification = { errorClass: 'harness', reason: 'the harness ended without a result' };
    if (classification?.errorClass === 'harness' && !this.sawResult) {
      const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ');
      classification = { ...classification, reason: `the harness exited (code ${exitCode}) without a result${tail ? `: ${tail}` : ''}` };
    }
    return {
      sessionId: this.sessionId,
      ...(this.endedBy ? { endedBy: this.endedBy, endDetail: this.endDetail } : {}),
      ...(classification ? { classification } : {}),
      sawResult: this.sawResult,
      exitCode,
      lastMessage: this.lastMessage,
      tokens: { ...this.tokens },
      costUsd: this.costUsd,
      context: this.context.snapshot(),
      stderrTail: this.stderrTail,
      ...(transcriptCopy ? { transcriptCopy } : {}),
    };
  }
}
